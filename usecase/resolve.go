package usecase

import (
	"context"
	"errors"
	"fmt"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
)

// ImageRequest is what `image` is given: the workflow's backend and the
// facts that pick its CI image (rules §6).
type ImageRequest struct {
	Backend policy.Backend
	// InputTag is the workflow_dispatch input ci_image_tag; CalledTag the
	// image_tag input of a called pr-test.yml (release CI).
	InputTag, CalledTag string
	// LockFile is a release-lock.json whose ci_image_tag is the called tag ("": none).
	LockFile string
	// PRBody is the pull request description (its ci-image-tag: line).
	PRBody string
	// PRImageAvailable says the PR's own image pr-<N> was published;
	// PRNumber is N ("" = not a pull request).
	PRImageAvailable bool
	PRNumber         string
	// Given.PRImage says PRImageAvailable was given itself (not read from the
	// environment).
	Given Given
}

// Validate checks the image request's arguments.
func (r ImageRequest) Validate() error {
	if r.CalledTag != "" && r.LockFile != "" {
		return errors.New("--called-image-tag and --lockfile both name the called tag; give one")
	}
	return nil
}

// Image resolves the CI image of the request's workflow.
func Image(r ImageRequest) (deps.Image, error) {
	if err := r.Validate(); err != nil {
		return deps.Image{}, err
	}
	in := deps.ImageInputs{Backend: r.Backend, CalledTag: r.CalledTag, InputTag: r.InputTag,
		PRBody: r.PRBody, PRImageAvailable: r.PRImageAvailable, PRNumber: r.PRNumber}
	if !policy.ProfileOf(r.Backend).PRImageTag {
		// The ROCm workflow reads no ci-image-tag: line and has no PR image.
		in.PRBody = ""
		if !r.Given.PRImage {
			in.PRImageAvailable = false
		}
	}
	if r.LockFile == "" {
		return deps.ResolveImage(in)
	}
	data, err := deps.ReadLockFile(r.LockFile)
	if err != nil {
		return deps.Image{}, fmt.Errorf("--lockfile: %w", err)
	}
	lock, err := deps.ParseLock(r.LockFile, data)
	if err != nil {
		return deps.Image{}, err
	}
	in.CalledTag = lock.CIImageTag
	img, err := deps.ResolveImage(in)
	if err == nil {
		img.Source = deps.FromLockfile
	}
	return img, err
}

// DepsRequest is what `deps` is given: a job's backend, the PR body and the
// dispatch inputs, and the checkout whose release-lock.json pins them (rules §7).
type DepsRequest struct {
	Backend                    policy.Backend
	PRBody                     string
	SGLangInput, MegatronInput string
	// Repo is the checkout ("" = the current folder); Given.Repo says it was given.
	Repo  string
	Given Given
}

// DepsAnswer is the dependency decision, and whether the backend's image
// bakes its dependencies (then the decision says whether to install over them).
type DepsAnswer struct {
	Decision deps.Decision
	Baked    bool
}

// Deps resolves the SGLang and Megatron-LM refs of a job.
func Deps(r DepsRequest) (DepsAnswer, error) {
	in := deps.Inputs{Backend: r.Backend, PRBody: r.PRBody, SGLangInput: r.SGLangInput, MegatronInput: r.MegatronInput}
	baked := policy.ProfileOf(r.Backend).BakedDeps
	var err error
	switch {
	case !baked:
		if in.Lock, err = deps.ReadLock(r.Repo); err != nil {
			return DepsAnswer{}, err
		}
	case r.Given.Repo:
		// ROCm images bake their own dependencies and never read the
		// lockfile; a --repo given anyway is still checked, so a typo in it
		// is an error rather than ignored.
		if _, err := policy.CheckCheckout(r.Repo); err != nil {
			return DepsAnswer{}, err
		}
	}
	d, err := deps.Resolve(in)
	return DepsAnswer{Decision: d, Baked: baked}, err
}

// FilePlanRequest is what `file-plan` is given (rules §10).
type FilePlanRequest struct {
	// Repo is the checkout of the PR head ("" = the current folder).
	Repo, File string
	// ImageTag is the radixark/miles tag (the dispatch input ci_image_tag),
	// ROCmImageTag the rocm/sgl-dev tag of a ROCm-only file.
	ImageTag, ROCmImageTag string
	PRBody                 string
	// Registry reads the checkout's test registry under its tables (nil:
	// the checkout's own; tests give a fixed one).
	Registry func(*policy.Tables) deps.Lookup
}

// FilePlanAnswer is the file's plan, and the PR body line its image tag came
// from (0: not the body).
type FilePlanAnswer struct {
	Plan      deps.FilePlan
	ImageLine int
	Messages  []Message
}

// FilePlan plans a single-file run, as file_run.py does.
func FilePlan(r FilePlanRequest) (FilePlanAnswer, error) {
	tables, msgs, err := LoadTables(r.Repo, "")
	ans := FilePlanAnswer{Messages: msgs}
	if err != nil {
		return ans, err
	}
	lookup := tables.LoadRegistry
	if r.Registry != nil {
		lookup = r.Registry(tables)
	}
	ans.Plan, err = deps.PlanFile(deps.FileRequest{Root: r.Repo, File: r.File, ImageTag: r.ImageTag, ROCmImageTag: r.ROCmImageTag, PRBody: r.PRBody, Tables: tables}, lookup)
	if err != nil {
		return ans, err
	}
	if d, ok := deps.FirstDirective(r.PRBody, deps.KeyImageTag); ok && ans.Plan.ImageSource == deps.FromPRBody {
		ans.ImageLine = d.Line
	}
	return ans, nil
}

// RosterRequest is what `stages` and `workflows` are given: the checkout
// whose workflows and CI_SUITES make the stage roster.
type RosterRequest struct {
	// Repo is the checkout; Shown names it in messages (see LoadTables).
	Repo, Shown string
	// Given.Repo says a checkout was named; without one the roster is the
	// built-in one of rules §1.
	Given Given
	// OrBuiltIn: a Repo that is not a Miles checkout gives the built-in
	// roster, with a notice (the module, whose source defaults to the folder
	// it is called from, and stages without --repo), rather than an error.
	OrBuiltIn bool
}

// Roster is the stage roster that applies to the request's checkout.
func Roster(r RosterRequest) ([]policy.Stage, []Message, error) {
	if !r.Given.Repo {
		return policy.Roster(), nil, nil
	}
	if r.OrBuiltIn {
		if _, err := policy.CheckCheckout(r.Repo); err != nil {
			var ce *policy.CheckoutError
			if !errors.As(err, &ce) {
				return nil, nil, err
			}
			name := r.Shown
			if name == "" {
				name = ce.Path
			}
			return policy.Roster(), []Message{Notice(name + " " + ce.Problem + "; showing the built-in roster of rules §1")}, nil
		}
	}
	tables, msgs, err := LoadTables(r.Repo, r.Shown)
	if err != nil {
		return nil, msgs, err
	}
	return tables.Stages(), msgs, nil
}

// ReleaseLockRequest is a --release-lock FILE: the release branch's
// release-lock.json, which stands in for cut-release-branch (rules §12.5).
type ReleaseLockRequest struct {
	// Path is the lockfile.
	Path string
}

// Validate checks the request before the file is read.
func (r ReleaseLockRequest) Validate() error {
	if r.Path == "" {
		return fmt.Errorf("--release-lock needs a file: give the %s a release branch cut writes", deps.LockFileName)
	}
	return nil
}

// ReleaseLock reads and checks the lockfile.
func ReleaseLock(r ReleaseLockRequest) (*deps.Lock, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	data, err := deps.ReadLockFile(r.Path)
	if err != nil {
		return nil, fmt.Errorf("--release-lock %w", err)
	}
	return ParseReleaseLock(r.Path, string(data))
}

// ParseReleaseLock checks the text of a lockfile the module was given
// (what names it in an error).
func ParseReleaseLock(what, text string) (*deps.Lock, error) {
	lock, err := deps.ParseLock(what, []byte(text))
	if err != nil {
		return nil, err
	}
	return &lock, nil
}

// BranchCutRequest is the module's release-lock: a release branch, the
// dependency branches to freeze and the CI image tag.
type BranchCutRequest struct {
	// Branch is the release branch, release/vX.Y.Z.
	Branch string
	// SGLangRef and MegatronRef are the branches whose heads are frozen.
	SGLangRef, MegatronRef string
	// ImageTag is the CI image tag ("" = release-vX.Y.Z-ci from Branch).
	ImageTag string
}

// Validate checks the branch and gives the default image tag.
func (r *BranchCutRequest) Validate() error {
	tag, err := deps.ReleaseImageTag(r.Branch)
	if err != nil {
		return err
	}
	if r.ImageTag == "" {
		r.ImageTag = tag
	}
	return nil
}

// BranchCut writes the release-lock.json of a branch cut: the dependency
// branch heads resolved now (on c), the image tag.
func BranchCut(ctx context.Context, c stagerun.Container, r BranchCutRequest, nonce string) (string, error) {
	if err := r.Validate(); err != nil {
		return "", err
	}
	commits, err := stagerun.ResolveBranches(ctx, c, r.SGLangRef, r.MegatronRef, nonce)
	if err != nil {
		return "", err
	}
	lock, err := deps.NewLock(deps.BranchCut{Branch: r.Branch, SGLangCommit: commits.SGLang, MegatronCommit: commits.Megatron, ImageTag: r.ImageTag})
	if err != nil {
		return "", err
	}
	lock.SGLangBranch, lock.MegatronBranch = r.SGLangRef, r.MegatronRef
	text, err := lock.Format()
	return string(text), err
}
