package policy

import (
	"slices"
)

// Stage is one CI job of Miles CI; its name is also the suite its tests declare.
type Stage struct {
	// Name is the suite the stage runs (its run_suite.py --suite), e.g.
	// stage-c-4-gpu-h200; Miles names the job after it.
	Name string `json:"name"`
	// Backend is the hardware backend whose registrations the stage runs.
	Backend Backend `json:"backend"`
	// RunsOn are the runner labels a runner must all carry; ["ubuntu-latest"] for
	// GitHub-hosted CPU stages, empty for suites run outside Miles' workflows.
	RunsOn []string `json:"runs_on"`
	// Shards is the number of est_time-balanced shards of a regular run (0 for
	// external suites; 1 for a job whose called workflow splits the suite itself).
	Shards int `json:"shards"`
	// MaxParallel is the matrix max-parallel for regular, nightly and release runs.
	MaxParallel int `json:"max_parallel"`
	// MaxParallelWeekly is the matrix max-parallel for weekly runs.
	MaxParallelWeekly int `json:"max_parallel_weekly"`
	// ByCadence is set when the workflow makes the shard count or max-parallel
	// depend on the cadence in a way the fields above do not tell.
	ByCadence *CadenceCounts `json:"by_cadence,omitempty"`
	// Needs are the jobs the stage waits for.
	Needs []string `json:"needs"`
	// Image is the image family the stage's container starts from ("" = none).
	Image string `json:"image"`
	// External marks a suite scheduled only by the external MI350 nightly.
	External bool `json:"external"`
	// FastFailGated is set when the stage runs only after stage-a-cpu succeeded
	// (unless bypass_fastfail).
	FastFailGated bool `json:"fast_fail_gated"`
	// SkipGated is set when the job does not run while the policy lists the
	// stage in skipped_stages.
	SkipGated bool `json:"skip_gated"`
	// Job is the workflow job id that runs the stage ("" for built-in rows and
	// external suites).
	Job string `json:"job,omitempty"`
	// Source is where the row came from: "FILE:LINE" of the job or of the
	// suite in CI_SUITES, or "built-in".
	Source string `json:"source"`
}

// CadenceCounts are the shard counts and max-parallel of each cadence.
type CadenceCounts struct {
	Shards      map[Cadence]int `json:"shards"`
	MaxParallel map[Cadence]int `json:"max_parallel"`
}

// ShardsFor returns the stage's shard count under a cadence.
func (s Stage) ShardsFor(c Cadence) int {
	if s.ByCadence != nil {
		if n, ok := s.ByCadence.Shards[c]; ok {
			return n
		}
	}
	return s.Shards
}

func (s Stage) clone() Stage {
	s.RunsOn = slices.Clone(s.RunsOn)
	s.Needs = slices.Clone(s.Needs)
	if s.ByCadence != nil {
		bc := CadenceCounts{Shards: map[Cadence]int{}, MaxParallel: map[Cadence]int{}}
		for k, v := range s.ByCadence.Shards {
			bc.Shards[k] = v
		}
		for k, v := range s.ByCadence.MaxParallel {
			bc.MaxParallel[k] = v
		}
		s.ByCadence = &bc
	}
	return s
}

// Image families of rules §1.
const (
	ImageMiles = "radixark/miles"
	ImageROCm  = "rocm/sgl-dev"
)

// builtinRoster is rules §1, in its order.
func builtinRoster() []Stage {
	gpuNeeds := func() []string { return []string{"policy", "image", "stage-a-cpu"} }
	return []Stage{
		{Name: "stage-a-cpu", Backend: CPU, RunsOn: []string{"ubuntu-latest"}, Shards: 4, MaxParallel: 4, MaxParallelWeekly: 4, Needs: []string{"policy"}},
		{Name: "stage-b-cpu", Backend: CPU, RunsOn: []string{"ubuntu-latest"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, Needs: []string{"policy"}},
		{Name: "stage-b-2-gpu-h200", Backend: CUDA, RunsOn: []string{"h200", "2gpu"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, Needs: gpuNeeds(), Image: ImageMiles, FastFailGated: true, SkipGated: true},
		{Name: "stage-c-2-gpu-h200", Backend: CUDA, RunsOn: []string{"h200", "2gpu"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 1, Needs: gpuNeeds(), Image: ImageMiles, FastFailGated: true, SkipGated: true},
		{Name: "stage-c-4-gpu-h200", Backend: CUDA, RunsOn: []string{"h200", "4gpu"}, Shards: 3, MaxParallel: 3, MaxParallelWeekly: 1, Needs: gpuNeeds(), Image: ImageMiles, FastFailGated: true, SkipGated: true},
		{Name: "stage-c-8-gpu-h100", Backend: CUDA, RunsOn: []string{"h100", "8gpu"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 1, Needs: gpuNeeds(), Image: ImageMiles, FastFailGated: true, SkipGated: true},
		{Name: "stage-c-8-gpu-h200", Backend: CUDA, RunsOn: []string{"h200", "8gpu"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 1, Needs: gpuNeeds(), Image: ImageMiles, FastFailGated: true, SkipGated: true},
		{Name: "stage-c-4-gpu-mi350", Backend: ROCM, RunsOn: []string{"self-hosted", "amd", "mi350", "4gpu"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 1, Needs: []string{"policy", "image", "deps"}, Image: ImageROCm, SkipGated: true},
		{Name: "nightly-stage-c-2-gpu-mi350", Backend: ROCM, RunsOn: []string{}, Needs: []string{}, External: true},
		{Name: "nightly-stage-c-4-gpu-mi350", Backend: ROCM, RunsOn: []string{}, Needs: []string{}, External: true},
		{Name: "nightly-stage-c-8-gpu-mi350", Backend: ROCM, RunsOn: []string{}, Needs: []string{}, External: true},
	}
}

// The package-level helpers below answer from the built-in tables; every
// command path uses the checkout's (Registry.Tables, LoadTables).

// Roster returns the built-in stage roster of rules §1, in its order. The result is a copy.
func Roster() []Stage { return builtin.Stages() }

// backendEnumName is the name Miles prints for a backend (HWBackend.name).
func backendEnumName(b Backend) string {
	if p, ok := Profile(b); ok {
		return p.Enum
	}
	return string(b)
}

// PRGPUStages are the built-in GPU stages a pull request may skip: every GPU
// stage of Miles' own workflows (not the external nightly- suites), sorted.
func PRGPUStages() []string { return builtin.PRGPUStages() }
