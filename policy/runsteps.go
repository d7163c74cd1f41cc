package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
	"gopkg.in/yaml.v3"
)

// The run workflows: the called workflows whose steps make a stage's
// container (each backend's BackendProfile.RunWorkflow).
const (
	RunCIWorkflow     = ".github/workflows/_run-ci.yml"
	RunCIROCmWorkflow = ".github/workflows/_run-ci-rocm.yml"
	RunCPUWorkflow    = ".github/workflows/_run-cpu-ci.yml"
)

// RunSteps are what the checkout's run workflows do that changes a stage's
// container (rules §11.6). A checkout without those workflows has the steps
// of 31f1ca9 (rules §9).
type RunSteps struct {
	// Reconcile is the argv of `python tests/ci/reconcile_dependencies.py
	// ...` where _run-ci.yml installs Miles' dependencies with it; nil: pip
	// install -r requirements.txt, keeping the image's cuDNN (rules §9).
	Reconcile []string `json:"reconcile,omitempty"`
	// ROCmPatch: _run-ci-rocm.yml applies the Megatron-LM ROCm patch (rules §8).
	ROCmPatch bool `json:"rocm_patch"`
	// ROCmPackages are what _run-ci-rocm.yml pip-installs after Miles.
	ROCmPackages []string `json:"rocm_packages"`
	// Env are the variables a step sets in $GITHUB_ENV for the stages its
	// if: selects by runner labels (e.g. NVSHMEM_HCA_LIST on 4-GPU H200).
	Env []StepEnv `json:"env,omitempty"`
	// JobTimeout is the timeout-minutes of each backend's test job, where
	// its run workflow sets one (0 or absent: GitHub's default).
	JobTimeout map[Backend]int `json:"job_timeout_minutes,omitempty"`
	// Unmodeled are the steps of the run workflows miles-ci does not model,
	// for lint.
	Unmodeled []Drift `json:"-"`
}

// TimeoutMinutes is the timeout-minutes the checkout's run workflow gives a
// backend's test job, or fallback where it sets none.
func (s RunSteps) TimeoutMinutes(b Backend, fallback int) int {
	if m := s.JobTimeout[b]; m > 0 {
		return m
	}
	return fallback
}

// StepEnv is one NAME=VALUE a run-workflow step writes to $GITHUB_ENV, and
// the if: that selects it from the stage's runner labels ("" = always).
type StepEnv struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	If    string `json:"if,omitempty"`
	// File and Line are where the step is.
	File string `json:"file"`
	Line int    `json:"line"`
}

// defaultRunSteps are the steps of rules §9 (Miles 31f1ca9).
func defaultRunSteps() RunSteps {
	return RunSteps{ROCmPatch: true, ROCmPackages: []string{"polars", "zstandard", "xxhash", "blake3", "numba==0.65.1"}}
}

// modeledSteps are the step names of each run workflow whose effect miles-ci
// reproduces (or that do nothing in its containers); any other step is
// reported by lint, since a stage here would not do what CI does.
var modeledSteps = map[string][]string{
	RunCIWorkflow: {"Checkout repository", "Configure source paths", "Cleanup Ray processes", "Wait for GPU ready",
		"Resolve dependency refs", "Reconcile Miles dependencies", "Install dependencies", "Sync dependency sources",
		"Verify source resolution", "Resolve suite plan", "Run tests"},
	RunCIROCmWorkflow: {"Checkout repository", "Cleanup Ray processes", "Wait for GPU ready", "Resolve dependency refs",
		"Install dependencies", "Install (miles only)", "Resolve suite plan", "Run tests"},
}

// maxJobTimeout is GitHub's largest job timeout (35 days of minutes for
// self-hosted runners); a larger value is not a timeout GitHub would keep.
const maxJobTimeout = 35 * 24 * 60

// modeledActions are the actions whose effect a stage container has already
// (the checkout is the source miles-ci copies in).
var modeledActions = []string{"actions/checkout@"}

// runsTests reports the job of a run workflow that runs the caller's
// execute_command as the test run (not only with --list-only).
func runsTests(j *yaml.Node) bool {
	steps := get(j, "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode {
		return false
	}
	for _, st := range steps.Content {
		if s, ok := scalar(get(deref(st), "run")); ok && strings.Contains(s, "inputs.execute_command") && !strings.Contains(s, "--list-only") {
			return true
		}
	}
	return false
}

var (
	reconcileLine = lazyre.New(`(?m)^\s*(?:python3?\s+)?(tests/ci/reconcile_dependencies\.py(?:[ \t]+(?:\\\n\s*)?[A-Za-z0-9_./-]+)*)\s*$`)
	pipExtraLine  = lazyre.New(`(?m)^\s*pip install ((?:"?[A-Za-z0-9_.=<>-]+"?\s+)+)--break-system-packages\s*$`)
	githubEnvLine = lazyre.New(`^\s*echo\s+"([A-Z][A-Z0-9_]*)=([A-Za-z0-9_.:/-]*)"\s*>>\s*"?\$GITHUB_ENV"?\s*$`)
	pathLikeEnv   = lazyre.New(`\$`)
)

// readRunSteps reads the run workflows of the checkout at root, from docs
// when readWorkflows decoded them already.
func (t *Tables) readRunSteps(root string, docs workflowDocs) error {
	t.RunSteps = defaultRunSteps()
	for _, rel := range []string{RunCIWorkflow, RunCIROCmWorkflow, RunCPUWorkflow} {
		d := docs.get(root, rel)
		if d.err != nil {
			return d.err
		}
		top := d.single()
		if top == nil {
			continue // absent, or broken: readWorkflows reports a broken workflow that a stage job calls
		}
		t.readRunWorkflow(rel, top)
	}
	return nil
}

func (t *Tables) readRunWorkflow(rel string, top *yaml.Node) {
	jobs := get(top, "jobs")
	if jobs == nil || jobs.Kind != yaml.MappingNode {
		return
	}
	rocm, cpu := rel == RunCIROCmWorkflow, rel == RunCPUWorkflow
	for i := 1; i < len(jobs.Content); i += 2 {
		j := deref(jobs.Content[i])
		if !runsTests(j) {
			continue // e.g. the hosted plan job: a stage run plans in its own container
		}
		if rocm {
			// The test job is there: it patches Megatron-LM only if a step says so.
			t.RunSteps.ROCmPatch = false
		}
		if v, ok := scalar(get(j, "timeout-minutes")); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= maxJobTimeout {
				for _, p := range backendProfiles {
					if p.RunWorkflow == rel {
						if t.RunSteps.JobTimeout == nil {
							t.RunSteps.JobTimeout = map[Backend]int{}
						}
						t.RunSteps.JobTimeout[p.Backend] = n
					}
				}
			}
		}
		if cpu {
			continue // only its timeout: the CPU steps are modeled by rules §9
		}
		steps := get(j, "steps")
		for _, stn := range steps.Content {
			st := deref(stn)
			name, _ := scalar(get(st, "name"))
			run, _ := scalar(get(st, "run"))
			cond, _ := scalar(get(st, "if"))
			uses, _ := scalar(get(st, "uses"))
			if name == "" {
				name = uses
			}
			modeled := slices.Contains(modeledSteps[rel], name) || slices.ContainsFunc(modeledActions, func(a string) bool { return strings.HasPrefix(uses, a) })
			if rocm {
				if strings.Contains(run, "amd_patch") {
					t.RunSteps.ROCmPatch = true
				}
				if m := pipExtraLine.FindStringSubmatch(run); m != nil && strings.Contains(name, "Install") {
					var pkgs []string
					for _, f := range strings.Fields(m[1]) {
						pkgs = append(pkgs, strings.Trim(f, `"`))
					}
					t.RunSteps.ROCmPackages = pkgs
				}
			} else if m := reconcileLine.FindStringSubmatch(run); m != nil {
				t.RunSteps.Reconcile = append([]string{"python"}, strings.Fields(strings.ReplaceAll(m[1], "\\\n", " "))...)
			}
			if env, ok := stepEnv(run); ok && !modeled && !StepEnvAllowed(env.Name) {
				t.RunSteps.Unmodeled = append(t.RunSteps.Unmodeled, Drift{Kind: DriftStepEnv, File: rel, Line: st.Line,
					Message: fmt.Sprintf("step %q of %s sets %s through $GITHUB_ENV, which is not on miles-ci's allow-list of run-workflow variables (GPU, collective and framework tunables such as NVSHMEM_*, NCCL_*, TORCH_*); a stage run here does not set it: set it in the test, or add the name to policy's allow-list", name, rel, env.Name)})
				continue
			}
			if env, ok := stepEnv(run); ok && !modeled {
				env.If, env.File, env.Line = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(cond), "${{"), "}}")), rel, st.Line
				t.RunSteps.Env = append(t.RunSteps.Env, env)
				continue
			}
			if !modeled {
				t.RunSteps.Unmodeled = append(t.RunSteps.Unmodeled, Drift{Kind: DriftUnmodeledStep, File: rel, Line: st.Line,
					Message: fmt.Sprintf("step %q of %s is not modeled by miles-ci, so a stage run here does not do what it does; update miles-ci, or run that stage on CI", name, rel)})
			}
		}
	}
}

// stepEnv reads a step whose whole script is one `echo "NAME=VALUE" >> "$GITHUB_ENV"`.
func stepEnv(run string) (StepEnv, bool) {
	lines := strings.Split(strings.TrimSpace(run), "\n")
	if len(lines) != 1 {
		return StepEnv{}, false
	}
	m := githubEnvLine.FindStringSubmatch(lines[0])
	if m == nil || pathLikeEnv.MatchString(m[2]) {
		return StepEnv{}, false
	}
	return StepEnv{Name: m[1], Value: m[2]}, true
}

// StageEnv are the variables the run workflow's steps set for a stage with
// these runner labels, in step order; an if: miles-ci cannot evaluate sets
// nothing and is returned in unknown.
func (s RunSteps) StageEnvFor(runsOn []string) (env []StepEnv, unknown []StepEnv) {
	labels, _ := json.Marshal(runsOn)
	for _, e := range s.Env {
		if e.If == "" {
			env = append(env, e)
			continue
		}
		v, err := evalExpr(e.If, func(path string) (any, bool) {
			if path == "inputs.runs_on" {
				return string(labels), true
			}
			return nil, false
		})
		if err != nil {
			unknown = append(unknown, e)
			continue
		}
		if truthy(v) {
			env = append(env, e)
		}
	}
	return env, unknown
}
