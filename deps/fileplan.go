package deps

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/policy/pysource"
)

// testFilePath is the shape of a file a single-file run accepts (rules §10);
// it also keeps the path safe to put in a command line.
var testFilePath = lazyre.New(`^tests/(e2e|fast|fast-gpu|ci)(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*/test_[A-Za-z0-9_][A-Za-z0-9_.-]*\.py$`)

// File-run timeout rule: max(MinFileTimeout, est_time × 1.25) seconds.
const MinFileTimeout = 1800

// maxFileTimeout caps est_time × 1.25 so a silly estimate cannot overflow.
const maxFileTimeout = 7 * 24 * 3600

// Lookup reads the whole test registry of a Miles checkout; policy.LoadRegistry
// is the real one. Like file_run.py, a single-file run reads every test file,
// so a broken file anywhere in the tree fails the run.
type Lookup func(root string) (*policy.Registry, error)

// FileRequest is a single-file run request (/rerun-test).
type FileRequest struct {
	// Root is the checkout of the PR head.
	Root string
	// File is the repo-relative test file, with '/' separators.
	File string
	// ImageTag is the dispatch input ci_image_tag ("" = PR body, then dev).
	ImageTag string
	// Image, when set, is the image a workflow's image job already decided
	// (a ci run's pool job): the file runs on it as it is.
	Image *Image
	// PRBody is the pull request description, read for ci-image-tag.
	PRBody string
	// ROCmImageTag is the rocm/sgl-dev tag for a ROCm-only file ("" =
	// miles-rocm720-mi35x); the PR-body tag names a radixark/miles image and
	// does not apply to ROCm.
	ROCmImageTag string
	// Tables are the checkout's CI tables (policy.LoadTables); nil means the
	// built-in ones.
	Tables *policy.Tables
}

// FilePlan is how one test file runs alone.
type FilePlan struct {
	// File is the repo-relative test file.
	File string `json:"file"`
	// HW is the backend: cpu, cuda or rocm.
	HW policy.Backend `json:"hw"`
	// Suite is the stage whose runner runs it.
	Suite string `json:"suite"`
	// RunsOn are the runner labels, all required. Empty for cpu, as
	// file_run.py writes it: a CPU file runs on the hosted runner the CPU
	// workflow fixes (ubuntu-latest).
	RunsOn []string `json:"runs_on"`
	// ContainerImage is the job's image. For cpu it is the radixark/miles
	// image file_run.py writes, which the bare CPU runner does not use.
	ContainerImage string `json:"container_image"`
	// ImageSource is where the image tag came from.
	ImageSource Source `json:"image_source"`
	// TimeoutSeconds is max(1800, est_time × 1.25), truncated to whole seconds.
	TimeoutSeconds int `json:"timeout_seconds"`
	// NumGPUs is a CUDA file's required_gpus under the B200 pool rules
	// (rules §11.8), which the batch workflow passes to _run-ci.yml; 0
	// elsewhere.
	NumGPUs int `json:"num_gpus,omitempty"`
	// Command is the argv that runs the file.
	Command []string `json:"command"`
}

// CheckTestPath checks the path shape of rules §10 and that no component
// below root is a symlink and the file is a regular file.
func CheckTestPath(root, rel string) error {
	if !testFilePath.MatchString(rel) {
		return fmt.Errorf("test file %q is not a registered tests/ path; give a repo-relative path like tests/e2e/precision/test_x.py under tests/e2e, tests/fast, tests/fast-gpu or tests/ci", rel)
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(sub)))
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("test file %s: %s does not exist in %s; check the path and the checked-out ref", rel, sub, root)
		}
		if err != nil {
			return fmt.Errorf("test file %s: %w", rel, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("test file %s: %s is a symlink; a single-file run follows no symlinks, give the real path", rel, sub)
		}
		if i < len(parts)-1 && !info.IsDir() {
			return fmt.Errorf("test file %s: %s is not a directory", rel, sub)
		}
		if i == len(parts)-1 && !info.Mode().IsRegular() {
			return fmt.Errorf("test file %s: not a regular file", rel)
		}
	}
	return nil
}

// checkNoSymlinkedTests refuses, as file_run.py does, a discovery root, a
// folder below one, or a test_*.py file below one that is a symlink: a
// single-file run reads the whole registry and follows no link, so one such
// entry anywhere fails every file's run.
func checkNoSymlinkedTests(root string) error {
	refuse := func(rel string) error {
		return fmt.Errorf("%s is a symlink: a single-file run, like file_run.py, reads no symlinked test file or folder below %s; replace it with the real file or folder", rel, strings.Join(policy.DiscoveryRoots, ", "))
	}
	for _, r := range policy.DiscoveryRoots {
		parts := strings.Split(r, "/")
		for i := range parts {
			rel := strings.Join(parts[:i+1], "/")
			if info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil && info.Mode()&fs.ModeSymlink != 0 {
				return refuse(rel)
			}
		}
		base := filepath.Join(root, filepath.FromSlash(r))
		err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == base && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return fmt.Errorf("reading the test tree: %w", err)
			}
			if d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			if !policy.IsTestFileName(d.Name()) {
				// file_run.py's os.walk lists a link to a folder among the
				// folders; a link to anything else matters only as a test file.
				if info, err := os.Stat(path); err != nil || !info.IsDir() {
					return nil
				}
			}
			rel, _ := filepath.Rel(root, path)
			return refuse(filepath.ToSlash(rel))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// PlanFile resolves a single-file run (rules §10): the file's one CPU or CUDA
// registration (or, a miles-ci addition, its one ROCm registration of a stage
// miles-ci runs when it has no CPU or CUDA one), its runner, image, timeout
// and command. Labels and cadence do not apply; a root that is not a Miles
// checkout, a fault anywhere in its registry, and a disabled, unregistered or
// ambiguous file are errors.
func PlanFile(req FileRequest, lookup Lookup) (FilePlan, error) {
	root, err := policy.CheckCheckout(req.Root)
	if err != nil {
		return FilePlan{}, err
	}
	// Like file_run.py, a bad tag fails the request whatever the backend.
	cudaImage, err := FileRunImageTag(req.ImageTag, req.PRBody)
	if req.Image != nil {
		cudaImage, err = *req.Image, nil
	}
	if err != nil {
		return FilePlan{}, err
	}
	if err := CheckTestPath(root, req.File); err != nil {
		return FilePlan{}, err
	}
	if err := checkNoSymlinkedTests(root); err != nil {
		return FilePlan{}, err
	}
	registry, err := lookup(root)
	var regErr *policy.RegistryError
	var checkoutErr *policy.CheckoutError
	if errors.As(err, &regErr) || errors.As(err, &checkoutErr) {
		return FilePlan{}, err // already names the file and the fix
	}
	if err != nil {
		return FilePlan{}, fmt.Errorf("test registry of %s: %w", root, err)
	}
	var matching []policy.Registration
	for _, r := range registry.Registrations {
		if r.File == req.File {
			matching = append(matching, r)
		}
	}
	if len(matching) == 0 {
		return FilePlan{}, fmt.Errorf("%s has no CI registration; /rerun-test runs only registered test files (add register_cpu_ci, register_cuda_ci or register_rocm_ci)", req.File)
	}
	var supported, rocm []policy.Registration
	for _, r := range matching {
		if policy.ProfileOf(r.Backend).FileRunLast {
			rocm = append(rocm, r)
		} else {
			supported = append(supported, r)
		}
	}
	pick := supported
	if len(pick) == 0 {
		// ROCm-only: a file may also be registered for the external nightly
		// suites; the stage miles-ci runs is the one to pick.
		pick = rocm
		var runnable []policy.Registration
		for _, r := range rocm {
			if st, ok := req.Tables.Stage(r.Suite); ok && !st.External && st.Backend == r.Backend {
				runnable = append(runnable, r)
			}
		}
		if len(runnable) > 0 {
			pick = runnable
		}
	}
	if len(pick) == 0 {
		return FilePlan{}, fmt.Errorf("%s has no cpu, cuda or rocm registration", req.File)
	}
	if len(pick) > 1 {
		names := make([]string, len(pick))
		for i, r := range pick {
			names[i] = strings.ToUpper(string(r.Backend)) + ":" + r.Suite
		}
		sort.Strings(names)
		kind := "CPU/CUDA"
		if len(supported) == 0 {
			kind = "ROCm"
		}
		return FilePlan{}, fmt.Errorf("%s has multiple %s registrations (%s); expected exactly one", req.File, kind, strings.Join(names, ", "))
	}
	reg := pick[0]
	if reg.Disabled != nil {
		return FilePlan{}, fmt.Errorf("%s is disabled: %s", req.File, *reg.Disabled)
	}
	runsOn, err := runnerFor(req.Tables, req.File, reg)
	if err != nil {
		return FilePlan{}, err
	}
	timeout, err := fileTimeout(reg.EstTime)
	if err != nil {
		return FilePlan{}, fmt.Errorf("%s line %d: %w", req.File, reg.Line, err)
	}
	plan := FilePlan{
		File:           req.File,
		HW:             reg.Backend,
		Suite:          reg.Suite,
		RunsOn:         runsOn,
		TimeoutSeconds: timeout,
	}
	if reg.Backend == policy.CUDA && req.Tables.TakesNumGPUs() {
		plan.NumGPUs = req.Tables.RequiredGPUs(reg)
	}
	p := policy.ProfileOf(reg.Backend)
	if p.Hosted {
		plan.RunsOn = []string{}
	}
	img := cudaImage
	if !p.PRImageTag && req.Image == nil {
		if img, err = ResolveImage(ImageInputs{Backend: reg.Backend, InputTag: req.ROCmImageTag}); err != nil {
			return FilePlan{}, err
		}
	}
	plan.ContainerImage, plan.ImageSource = img.Image, img.Source
	plan.Command = p.FileCommand(req.File)
	return plan, nil
}

// fileTimeout is max(1800, int(est_time × 1.25)) as file_run.py computes it.
func fileTimeout(est float64) (int, error) {
	scaled := est * 1.25
	if math.IsNaN(scaled) || scaled < 0 || scaled > maxFileTimeout {
		return 0, fmt.Errorf("est_time %s gives no usable timeout; give an estimate between 0 and %d seconds", pysource.FloatRepr(est), int(maxFileTimeout/1.25))
	}
	return max(MinFileTimeout, int(scaled)), nil
}
