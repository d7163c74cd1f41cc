package policy

import "slices"

// Outputs are the resolve-ci-policy job's step outputs (rules §3, §4), as
// `miles-ci policy --json` and the Dagger module's policy function print them.
type Outputs struct {
	Cadence        Cadence  `json:"cadence"`
	RawLabels      []string `json:"raw_labels"`
	BypassFastfail bool     `json:"bypass_fastfail"`
	SkippedStages  []string `json:"skipped_stages"`
	// NeedsCUDAImage is set where the checkout's ci_policy writes it (rules
	// §11.5): true when some CUDA stage is not skipped; nil elsewhere.
	NeedsCUDAImage *bool `json:"needs_cuda_image,omitempty"`
}

// Outputs are the step outputs of a workflow policy and its skipped stages,
// in the checkout's form.
func (t *Tables) Outputs(wp WorkflowPolicy, skipped []string) Outputs {
	if skipped == nil {
		skipped = []string{}
	}
	o := Outputs{Cadence: wp.Cadence, RawLabels: wp.RawLabels, BypassFastfail: wp.BypassFastfail, SkippedStages: skipped}
	if t.or().Forms.NeedsCUDAImage {
		needs := slices.ContainsFunc(t.or().CUDAStages, func(s CUDAStage) bool { return !slices.Contains(skipped, s.Name) })
		o.NeedsCUDAImage = &needs
	}
	return o
}
