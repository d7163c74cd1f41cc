package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Stage is one CI job of Miles CI; its name is also the suite its tests declare.
type Stage struct {
	// Name is the stage and suite name, e.g. stage-c-4-gpu-h200.
	Name string `json:"name"`
	// Backend is the hardware backend whose registrations the stage runs.
	Backend Backend `json:"backend"`
	// RunsOn are the runner labels a runner must all carry; ["ubuntu-latest"] for
	// GitHub-hosted CPU stages, empty for suites run outside Miles' workflows.
	RunsOn []string `json:"runs_on"`
	// Shards is the number of est_time-balanced shards (0 for external suites).
	Shards int `json:"shards"`
	// MaxParallel is the matrix max-parallel for regular, nightly and release runs.
	MaxParallel int `json:"max_parallel"`
	// MaxParallelWeekly is the matrix max-parallel for weekly runs.
	MaxParallelWeekly int `json:"max_parallel_weekly"`
	// Needs are the jobs the stage waits for.
	Needs []string `json:"needs"`
	// Image is the image family the stage's container starts from ("" = none).
	Image string `json:"image"`
	// External marks a suite scheduled only by the external MI350 nightly.
	External bool `json:"external"`
	// FastFailGated is set when the stage runs only after stage-a-cpu succeeded
	// (unless bypass_fastfail).
	FastFailGated bool `json:"fast_fail_gated"`
}

// Image families of rules §1.
const (
	ImageMiles = "radixark/miles"
	ImageROCm  = "rocm/sgl-dev"
)

var gpuNeeds = []string{"policy", "image", "stage-a-cpu"}

// roster is rules §1, in its order.
var roster = []Stage{
	{Name: "stage-a-cpu", Backend: CPU, RunsOn: []string{"ubuntu-latest"}, Shards: 4, MaxParallel: 4, MaxParallelWeekly: 4, Needs: []string{"policy"}},
	{Name: "stage-b-cpu", Backend: CPU, RunsOn: []string{"ubuntu-latest"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, Needs: []string{"policy"}},
	{Name: "stage-b-2-gpu-h200", Backend: CUDA, RunsOn: []string{"h200", "2gpu"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, Needs: gpuNeeds, Image: ImageMiles, FastFailGated: true},
	{Name: "stage-c-2-gpu-h200", Backend: CUDA, RunsOn: []string{"h200", "2gpu"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 1, Needs: gpuNeeds, Image: ImageMiles, FastFailGated: true},
	{Name: "stage-c-4-gpu-h200", Backend: CUDA, RunsOn: []string{"h200", "4gpu"}, Shards: 3, MaxParallel: 3, MaxParallelWeekly: 1, Needs: gpuNeeds, Image: ImageMiles, FastFailGated: true},
	{Name: "stage-c-8-gpu-h100", Backend: CUDA, RunsOn: []string{"h100", "8gpu"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 1, Needs: gpuNeeds, Image: ImageMiles, FastFailGated: true},
	{Name: "stage-c-8-gpu-h200", Backend: CUDA, RunsOn: []string{"h200", "8gpu"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 1, Needs: gpuNeeds, Image: ImageMiles, FastFailGated: true},
	{Name: "stage-c-4-gpu-mi350", Backend: ROCM, RunsOn: []string{"self-hosted", "amd", "mi350", "4gpu"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 1, Needs: []string{"policy", "image", "deps"}, Image: ImageROCm},
	{Name: "nightly-stage-c-2-gpu-mi350", Backend: ROCM, RunsOn: []string{}, Needs: []string{}, External: true},
	{Name: "nightly-stage-c-4-gpu-mi350", Backend: ROCM, RunsOn: []string{}, Needs: []string{}, External: true},
	{Name: "nightly-stage-c-8-gpu-mi350", Backend: ROCM, RunsOn: []string{}, Needs: []string{}, External: true},
}

// suiteOrder is each backend's suite list in the order Miles' CI_SUITES keeps it.
var suiteOrder = map[Backend][]string{
	CPU:  {"stage-a-cpu", "stage-b-cpu"},
	CUDA: {"stage-b-2-gpu-h200", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200", "stage-c-4-gpu-h200", "stage-c-2-gpu-h200"},
	ROCM: {"stage-c-4-gpu-mi350", "nightly-stage-c-8-gpu-mi350", "nightly-stage-c-4-gpu-mi350", "nightly-stage-c-2-gpu-mi350"},
}

// Roster returns the stage roster of rules §1, in its order. The result is a copy.
func Roster() []Stage {
	out := make([]Stage, len(roster))
	for i, s := range roster {
		s.RunsOn = slices.Clone(s.RunsOn)
		s.Needs = slices.Clone(s.Needs)
		out[i] = s
	}
	return out
}

// StageByName returns the roster entry of a stage (= suite) name.
func StageByName(name string) (Stage, bool) {
	for _, s := range Roster() {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// Suites returns the suites of a backend.
func Suites(b Backend) []string { return slices.Clone(suiteOrder[b]) }

// ParseBackend reads a --hw value.
func ParseBackend(s string) (Backend, error) {
	switch b := Backend(s); b {
	case CPU, CUDA, ROCM:
		return b, nil
	}
	return "", fmt.Errorf("unknown hardware backend %q; use one of cpu, cuda, rocm", s)
}

// CheckSuite returns an error unless suite belongs to backend b.
func CheckSuite(b Backend, suite string) error {
	if slices.Contains(suiteOrder[b], suite) {
		return nil
	}
	return fmt.Errorf("Unknown suite %s for backend %s; the %s suites are %s", suite, backendEnumName(b), b, strings.Join(suiteOrder[b], ", "))
}

// backendEnumName is the name Miles prints for a backend (HWBackend.name).
func backendEnumName(b Backend) string {
	switch b {
	case CPU:
		return "CPU"
	case CUDA:
		return "CUDA"
	case ROCM:
		return "ROCM"
	}
	return string(b)
}

// PRGPUStages are the GPU stages a pull request may skip: every GPU stage of
// Miles' own workflows (not the external nightly- suites), sorted.
func PRGPUStages() []string {
	var out []string
	for _, s := range roster {
		if s.Backend != CPU && !s.External {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}
