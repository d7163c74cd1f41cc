package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// GitHub names a job's hardware with runner labels (rules §14.1): the GPU
// model (h100, h200, b200, mi350), the runner size (2gpu, 4gpu, 8gpu), and
// labels that name no GPU: those GitHub gives every self-hosted runner, and
// the vendor.
var (
	sizeLabel = regexp.MustCompile(`^[0-9]+gpu$`)
	// runnerLabels are the labels GitHub adds to every self-hosted runner
	// (its OS and architecture) and the hosted runners' names.
	runnerLabels = []string{"self-hosted", "linux", "windows", "macos", "x64", "arm", "arm64"}
)

// GPUModel is the GPU model a stage's runners carry, as the checkout
// declares it (rules §14.1): a CUDA stage of hardware.py's CUDA_STAGES
// names it first in its runs_on (its model, its count, then what else the
// runner offers); any other stage's job names it among its runs_on labels
// (ModelOfRunsOn). "" for a stage that takes no GPU.
func (t *Tables) GPUModel(st Stage) (string, error) {
	p, ok := Profile(st.Backend)
	if !ok || p.GPU == NoGPU || st.External {
		return "", nil
	}
	if cs, found := t.cudaStage(st.Name); found && len(cs.RunsOn) > 0 {
		return strings.ToLower(cs.RunsOn[0]), nil
	}
	return ModelOfRunsOn(st.Name, st.RunsOn, st.Backend)
}

// ModelOfRunsOn is the GPU model a job's runs_on names: its one label that
// is neither the runner size (4gpu), a label GitHub gives every
// self-hosted runner (self-hosted, linux, x64, ...), nor the backend's GPU
// vendor (amd, nvidia). A job whose labels leave none, or more than one, is
// an error: miles-ci does not guess a model from a stage's name.
func ModelOfRunsOn(job string, runsOn []string, b Backend) (string, error) {
	vendor := string(ProfileOf(b).GPU)
	var left []string
	for _, l := range runsOn {
		l = strings.ToLower(l)
		if sizeLabel.MatchString(l) || slices.Contains(runnerLabels, l) || strings.HasPrefix(l, "ubuntu-") || l == vendor {
			continue
		}
		left = append(left, l)
	}
	if len(left) != 1 {
		return "", fmt.Errorf("%s runs on %q: miles-ci reads the GPU model from the one runs_on label that is not the size (4gpu), the vendor (%s) or a label GitHub gives every runner (self-hosted, linux, x64), and these labels leave %q", job, runsOn, vendor, left)
	}
	return left[0], nil
}
