package deps

import "github.com/radixark/miles-ci/policy"

// stageRunner is the part of the rules §1 stage roster a single-file run
// needs. It stands in for policy.Roster() until that lands; switch
// runnerFor over to it then.
type stageRunner struct {
	backend policy.Backend
	runsOn  []string
}

// stageRunners is rules §1, in roster order. The nightly- ROCm suites run
// outside this CI and so have no runner here.
var stageRunners = map[string]stageRunner{
	"stage-a-cpu":         {policy.CPU, []string{"ubuntu-latest"}},
	"stage-b-cpu":         {policy.CPU, []string{"ubuntu-latest"}},
	"stage-b-2-gpu-h200":  {policy.CUDA, []string{"h200", "2gpu"}},
	"stage-c-2-gpu-h200":  {policy.CUDA, []string{"h200", "2gpu"}},
	"stage-c-4-gpu-h200":  {policy.CUDA, []string{"h200", "4gpu"}},
	"stage-c-8-gpu-h100":  {policy.CUDA, []string{"h100", "8gpu"}},
	"stage-c-8-gpu-h200":  {policy.CUDA, []string{"h200", "8gpu"}},
	"stage-c-4-gpu-mi350": {policy.ROCM, []string{"self-hosted", "amd", "mi350", "4gpu"}},
}

// externalSuites are registered suites that no miles-ci stage runs.
var externalSuites = map[string]bool{
	"nightly-stage-c-2-gpu-mi350": true,
	"nightly-stage-c-4-gpu-mi350": true,
	"nightly-stage-c-8-gpu-mi350": true,
}

// runnerFor returns the runner labels of a suite of a backend, a copy the
// caller may keep.
func runnerFor(backend policy.Backend, suite string) ([]string, bool) {
	s, ok := stageRunners[suite]
	if !ok || s.backend != backend {
		return nil, false
	}
	return append([]string(nil), s.runsOn...), true
}

// suitesOf lists the runnable suites of a backend, sorted, for error messages.
func suitesOf(backend policy.Backend) []string {
	var out []string
	for _, name := range []string{
		"stage-a-cpu", "stage-b-cpu", "stage-b-2-gpu-h200", "stage-c-2-gpu-h200",
		"stage-c-4-gpu-h200", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200", "stage-c-4-gpu-mi350",
	} {
		if stageRunners[name].backend == backend {
			out = append(out, name)
		}
	}
	return out
}
