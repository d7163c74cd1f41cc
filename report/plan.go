package report

import (
	"fmt"
	"slices"
	"strings"
)

// maxPlanBytes bounds the --list-only text read: a plan is a few KiB.
const maxPlanBytes = 4 << 20

// ParseListOnly reads the enabled files of `run_suite.py --list-only` output
// (rules §5): the "  - FILE (est_time=...)" lines of its "Enabled N test(s)"
// block, in order; none when it printed "No tests found".
func ParseListOnly(text string) ([]string, error) {
	if len(text) > maxPlanBytes {
		return nil, fmt.Errorf("plan output: %d bytes, more than the %d a plan prints", len(text), maxPlanBytes)
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "No tests found for ") {
			return []string{}, nil
		}
		if !strings.HasPrefix(line, "Enabled ") || !strings.Contains(line, " test(s)") {
			continue
		}
		files := []string{}
		for _, l := range lines[i+1:] {
			item, ok := strings.CutPrefix(l, "  - ")
			if !ok {
				break
			}
			cut := strings.LastIndex(item, " (est_time=")
			if cut < 0 {
				return nil, fmt.Errorf("plan output: line %q has no (est_time=...); is this run_suite.py --list-only output?", l)
			}
			files = append(files, item[:cut])
		}
		return files, nil
	}
	return nil, fmt.Errorf("plan output has neither an \"Enabled N test(s)\" nor a \"No tests found\" line; is this run_suite.py --list-only output?")
}

// CheckPlan compares the files the container's run_suite.py plans with the
// files miles-ci planned for the same shard; a difference is an error that
// shows both lists.
func CheckPlan(container, milesCI []string) error {
	if slices.Equal(container, milesCI) {
		return nil
	}
	var b strings.Builder
	b.WriteString("plan drift: the checkout's run_suite.py --list-only and miles-ci plan different files for this shard; ")
	b.WriteString("update miles-ci's tables or the checkout's tests/ci so they agree")
	list := func(title string, files []string) {
		fmt.Fprintf(&b, "\n%s (%d):", title, len(files))
		for _, f := range files {
			mark := " "
			if !slices.Contains(container, f) || !slices.Contains(milesCI, f) {
				mark = "*"
			}
			fmt.Fprintf(&b, "\n  %s %s", mark, f)
		}
	}
	list("run_suite.py --list-only in the container", container)
	list("miles-ci plan", milesCI)
	b.WriteString("\n(* = only in one list)")
	return fmt.Errorf("%s", b.String())
}
