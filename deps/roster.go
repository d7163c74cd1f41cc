package deps

import (
	"fmt"

	"github.com/radixark/miles-ci/policy"
)

// runnerFor returns the runner labels of a registration's suite from the
// stage roster of the tables (nil: the built-in rules §1 roster): an error
// for a suite not of its backend, and for the external nightly- suites, which
// no miles-ci stage runs.
func runnerFor(t *policy.Tables, file string, reg policy.Registration) ([]string, error) {
	if err := t.CheckSuite(reg.Backend, reg.Suite); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", file, reg.Line, err)
	}
	if runsOn, ok := t.FileRunsOn(reg); ok {
		return runsOn, nil
	}
	stage, ok := t.Stage(reg.Suite)
	if !ok || stage.External || len(stage.RunsOn) == 0 {
		return nil, fmt.Errorf("%s is registered only for %s, which runs outside miles-ci (external nightly); register it for stage-c-4-gpu-mi350 to run it here", file, reg.Suite)
	}
	return stage.RunsOn, nil
}
