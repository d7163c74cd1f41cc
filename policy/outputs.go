package policy

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

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

// StepOutput is one key=value line of the resolve-ci-policy step.
type StepOutput struct{ Key, Value string }

// StepOutputs are the step's key=value outputs, in the order ci_policy.py
// writes them: cadence, raw_labels, bypass_fastfail, skipped_stages, then
// needs_cuda_image where the checkout's form writes it.
func (o Outputs) StepOutputs() []StepOutput {
	skipped := o.SkippedStages
	if skipped == nil {
		skipped = []string{}
	}
	js, _ := json.Marshal(skipped)
	out := []StepOutput{
		{"cadence", string(o.Cadence)},
		{"raw_labels", strings.Join(o.RawLabels, " ")},
		{"bypass_fastfail", strconv.FormatBool(o.BypassFastfail)},
		{"skipped_stages", string(js)},
	}
	if o.NeedsCUDAImage != nil {
		out = append(out, StepOutput{"needs_cuda_image", strconv.FormatBool(*o.NeedsCUDAImage)})
	}
	return out
}
