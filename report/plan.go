package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/policy"
)

// maxPlanBytes bounds the --list-only text read: a plan is a few KiB.
const maxPlanBytes = 4 << 20

// ParseListOnly reads the enabled files of `run_suite.py --list-only` output
// (rules §5), in order; none when it printed "No tests found" (ReadListOnly).
func ParseListOnly(text string) ([]string, error) {
	p, err := ReadListOnly(text)
	if err != nil {
		return nil, err
	}
	files := []string{}
	for _, t := range p.Enabled {
		files = append(files, t.File)
	}
	return files, nil
}

// ReadListOnly reads `run_suite.py --list-only` output (rules §5) back into
// a plan, the one reader of that text: the stage container's plan step and
// the checkout planner both use it. The "Policy: " and "Hardware: " lines
// are read when they are there (Cadence and Suite stay "" without them); the
// Skipped and Enabled blocks always, in order. A test's labels and nightly
// flag are not printed, so they stay unset. Text with neither an
// "Enabled N test(s)" nor a "No tests found" line is not a plan.
func ReadListOnly(text string) (*policy.Plan, error) {
	if len(text) > maxPlanBytes {
		return nil, fmt.Errorf("plan output: %d bytes, more than the %d a plan prints", len(text), maxPlanBytes)
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	bad := func(i int, what string) error {
		return fmt.Errorf("run_suite.py --list-only output line %d (%q) is not %s", i+1, lines[i], what)
	}
	p := &policy.Plan{Enabled: []policy.PlannedTest{}, Skipped: []policy.SkippedTest{}}
	planned := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "Policy: "):
			if want := readPolicyLine(p, strings.TrimPrefix(l, "Policy: ")); want != "" {
				return nil, bad(i, want)
			}
		case strings.HasPrefix(l, "Hardware: "):
			if want := readHardwareLine(p, l); want != "" {
				return nil, bad(i, want)
			}
		case strings.HasPrefix(l, "No tests found for "):
			planned = true
		case strings.HasPrefix(l, "Skipped ") && strings.HasSuffix(l, " test(s):"):
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  - ") {
				i++
				first := i
				item := strings.TrimPrefix(lines[i], "  - ")
				cut := strings.Index(item, " (reason: ")
				if cut < 0 {
					return nil, bad(i, "  - FILE (reason: R)")
				}
				// A reason is the test's own text, printed as it is: a
				// newline in it continues the item on the next lines, up
				// to a line that ends in ")" before the block's end or
				// the next item.
				closes := func(j int) bool {
					next := ""
					if j+1 < len(lines) {
						next = lines[j+1]
					}
					return strings.HasSuffix(lines[j], ")") && (next == "" || strings.HasPrefix(next, "  - ") && strings.Contains(next, " (reason: "))
				}
				for !closes(i) {
					if i+1 >= len(lines) {
						return nil, bad(first, "  - FILE (reason: R), closed by a ) on a later line")
					}
					i++
				}
				item = strings.TrimPrefix(strings.Join(lines[first:i+1], "\n"), "  - ")
				p.Skipped = append(p.Skipped, policy.SkippedTest{File: item[:cut], Reason: item[cut+len(" (reason: ") : len(item)-1]})
			}
		case strings.HasPrefix(l, "Enabled ") && strings.Contains(l, " test(s)"):
			planned = true
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  - ") {
				i++
				t, err := readEnabledLine(lines[i])
				if err != nil {
					return nil, err
				}
				p.Enabled = append(p.Enabled, t)
				p.EstTotal += t.EstTime
			}
		}
	}
	if !planned {
		return nil, fmt.Errorf("plan output has neither an \"Enabled N test(s)\" nor a \"No tests found\" line; is this run_suite.py --list-only output?")
	}
	return p, nil
}

// readPolicyLine reads "cadence='C' bypass_fastfail=B include_labels=[...]"
// into p, or says what the line should have been.
func readPolicyLine(p *policy.Plan, pol string) (want string) {
	cad, rest, ok := strings.Cut(pol, " bypass_fastfail=")
	bypass, inc, ok2 := strings.Cut(rest, " include_labels=")
	if !ok || !ok2 || !strings.HasPrefix(cad, "cadence='") {
		return "Policy: cadence='C' bypass_fastfail=B include_labels=[...]"
	}
	p.Cadence = policy.Cadence(strings.TrimSuffix(strings.TrimPrefix(cad, "cadence='"), "'"))
	p.BypassFastfail = bypass == "True"
	labels, err := pyStrList(inc)
	if err != nil {
		return "a list of labels: " + err.Error()
	}
	p.IncludeLabels = labels
	p.AdmitNightly = p.Cadence == policy.Nightly || p.Cadence == policy.Weekly || p.Cadence == policy.Release
	return ""
}

// readHardwareLine reads "Hardware: HW  Suite: S  ...  Partition: P" into
// p, or says what the line should have been.
func readHardwareLine(p *policy.Plan, l string) (want string) {
	fields := map[string]string{}
	for _, f := range strings.Split(l, "  ") {
		if k, v, ok := strings.Cut(f, ": "); ok {
			fields[k] = v
		}
	}
	p.HW = policy.Backend(strings.ToLower(fields["Hardware"]))
	p.Suite = fields["Suite"]
	p.ContinueOnError = fields["Continue on error"] == "True"
	if part := fields["Partition"]; part != "full" {
		var n, size, id int
		if _, err := fmt.Sscanf(part, "%d/%d (0-based id=%d)", &n, &size, &id); err != nil {
			return "Partition: full or Partition: I/N (0-based id=I)"
		}
		p.Partition = &policy.Partition{ID: id, Size: size}
	}
	return ""
}

// readEnabledLine reads "  - FILE (est_time=Xs)", maybe with " [implicit]".
func readEnabledLine(l string) (policy.PlannedTest, error) {
	item := strings.TrimPrefix(l, "  - ")
	t := policy.PlannedTest{Labels: []string{}}
	if s, ok := strings.CutSuffix(item, " [implicit]"); ok {
		item, t.Implicit = s, true
	}
	cut := strings.LastIndex(item, " (est_time=")
	if cut < 0 || !strings.HasSuffix(item, "s)") {
		return t, fmt.Errorf("plan output: line %q has no (est_time=...); is this run_suite.py --list-only output?", l)
	}
	est, err := strconv.ParseFloat(item[cut+len(" (est_time="):len(item)-2], 64)
	if err != nil {
		return t, fmt.Errorf("plan output: line %q has no (est_time=...); is this run_suite.py --list-only output?", l)
	}
	t.File, t.EstTime = item[:cut], est
	return t, nil
}

// pyStrList reads a Python list of plain string literals: ['a', 'b'].
func pyStrList(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("%q is not a list", s)
	}
	out := []string{}
	body := strings.TrimSpace(s[1 : len(s)-1])
	if body == "" {
		return out, nil
	}
	for _, item := range strings.Split(body, ", ") {
		if len(item) < 2 || item[0] != '\'' || item[len(item)-1] != '\'' || strings.ContainsAny(item[1:len(item)-1], `'\`) {
			return nil, fmt.Errorf("%q is not a plain string", item)
		}
		out = append(out, item[1:len(item)-1])
	}
	return out, nil
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
