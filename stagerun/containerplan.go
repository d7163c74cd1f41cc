package stagerun

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/policy"
)

// withContainerPlan fills spec.Tests from the container's own run_suite.py
// --list-only output (the plan step's stdout, as the engine captured it)
// when miles-ci has no offline plan of the shard (Request.PlanUnavailable):
// each enabled file, with the timeout run_suite.py gives it, so the results
// report on the files the container runs.
func withContainerPlan(text string, spec Spec) (Spec, error) {
	tests, err := containerPlanTests(text, spec.HW)
	if err != nil {
		return spec, err
	}
	spec.Tests = tests
	return spec, nil
}

// containerPlanTests reads the enabled files and est_times of --list-only
// text (rules §5) and gives GPU files run_suite.py's per-file timeout.
func containerPlanTests(text string, hw policy.Backend) ([]ExpectedTest, error) {
	tests := []ExpectedTest{}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	p := policy.ProfileOf(hw)
	for i, line := range lines {
		if strings.HasPrefix(line, "No tests found for ") {
			return tests, nil
		}
		if !strings.HasPrefix(line, "Enabled ") || !strings.Contains(line, " test(s)") {
			continue
		}
		for _, l := range lines[i+1:] {
			item, ok := strings.CutPrefix(l, "  - ")
			if !ok {
				break
			}
			item = strings.TrimSuffix(item, " [implicit]")
			cut := strings.LastIndex(item, " (est_time=")
			if cut < 0 || !strings.HasSuffix(item, "s)") {
				return nil, fmt.Errorf("plan output: line %q has no (est_time=...); is this run_suite.py --list-only output?", l)
			}
			t := ExpectedTest{File: item[:cut]}
			if p.FileTimeoutS > 0 {
				est, err := strconv.ParseFloat(item[cut+len(" (est_time="):len(item)-2], 64)
				if err != nil {
					return nil, fmt.Errorf("plan output: line %q has no number in (est_time=...)", l)
				}
				t.TimeoutS = fileTimeout(p, est)
			}
			tests = append(tests, t)
		}
		return tests, nil
	}
	return nil, fmt.Errorf("plan output has neither an \"Enabled N test(s)\" nor a \"No tests found\" line; is this run_suite.py --list-only output?")
}
