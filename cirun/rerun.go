package cirun

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// RunFacts are what a re-run of a run must share with it (--rerun-failed):
// the checkout's commit, the event and its trigger facts, and the planner.
// They are written into the run's summary.json, with the run's id.
type RunFacts struct {
	// RunID names the run across its attempts (the history's github_run_id
	// of a local run).
	RunID string `json:"run_id"`
	// Commit is the checkout's commit ("" when it has none).
	Commit string `json:"commit"`
	// Planner is who planned the shards: miles-ci or checkout.
	Planner  string            `json:"planner"`
	Event    string            `json:"event"`
	Action   string            `json:"action,omitempty"`
	Schedule string            `json:"schedule,omitempty"`
	Labels   []string          `json:"labels,omitempty"`
	PRNumber int               `json:"pr_number,omitempty"`
	Fork     bool              `json:"fork,omitempty"`
	Inputs   map[string]string `json:"inputs,omitempty"`
	// PRBodySHA256 is the digest of the PR description ("" for none): its
	// directives decide the image and refs, its text stays out of the file.
	PRBodySHA256 string `json:"pr_body_sha256,omitempty"`
}

// FactsOf are an event's trigger facts, for a run of commit with planner.
func FactsOf(ev Event, commit, planner string) RunFacts {
	f := RunFacts{Commit: commit, Planner: planner, Event: ev.Name, Action: ev.Action, Schedule: ev.Schedule, PRNumber: ev.PRNumber, Fork: ev.Fork}
	if len(ev.Labels) > 0 {
		f.Labels = slices.Clone(ev.Labels)
		slices.Sort(f.Labels)
	}
	if len(ev.Inputs) > 0 {
		f.Inputs = maps.Clone(ev.Inputs)
	}
	if ev.PRBody != "" {
		sum := sha256.Sum256([]byte(ev.PRBody))
		f.PRBodySHA256 = hex.EncodeToString(sum[:])
	}
	return f
}

// Differences name each fact in which a run (now) differs from the earlier
// run it would re-run (was), in a fixed order; none means it is the same.
func (was RunFacts) Differences(now RunFacts) []string {
	var out []string
	diff := func(what, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s: %s then, %s now", what, orNone(a), orNone(b)))
		}
	}
	diff("checkout commit", was.Commit, now.Commit)
	diff("event", was.Event, now.Event)
	diff("pull request action", was.Action, now.Action)
	diff("schedule", was.Schedule, now.Schedule)
	diff("PR labels", strings.Join(was.Labels, ","), strings.Join(now.Labels, ","))
	diff("PR number", numberOrNone(was.PRNumber), numberOrNone(now.PRNumber))
	diff("fork", fmt.Sprint(was.Fork), fmt.Sprint(now.Fork))
	diff("PR description (sha256)", was.PRBodySHA256, now.PRBodySHA256)
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(was.Inputs, now.Inputs))) {
		diff("input "+k, was.Inputs[k], now.Inputs[k])
	}
	diff("planner", was.Planner, now.Planner)
	return out
}

func mergeKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func numberOrNone(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// ToRerun are the units of a finished run that a re-run runs again: those
// that failed, were cancelled or could not run. Jobs that passed, were
// skipped or left out are not among them (a skipped job's if: is evaluated
// again in the re-run, and runs when it now holds).
func (r *Report) ToRerun() []JobReport {
	var out []JobReport
	for _, j := range r.Jobs {
		switch j.State {
		case Failed, Cancelled, NotRun, Queued, Running:
			out = append(out, j)
		}
	}
	return out
}

// Kept are the outcomes of a finished run's passed units, by unit, for
// Options.Previous of its re-run; detail gives each one's Detail (nil: none).
func (r *Report) Kept(detail func(JobReport) any) map[string]Previous {
	out := map[string]Previous{}
	for _, j := range r.Jobs {
		if j.State != Passed {
			continue
		}
		attempt := max(j.Attempt, 1)
		var d any
		if detail != nil {
			d = detail(j)
		}
		out[j.Unit()] = Previous{Outcome: Outcome{Result: ResultSuccess, Outputs: j.Outputs, Reason: j.Reason, ExitCode: j.ExitCode, Detail: d, Results: j.Results},
			Attempt: attempt, Start: j.Start, Duration: j.Duration}
	}
	return out
}

// MaxReportSize bounds the summary.json of a graph run a re-run reads.
const MaxReportSize = 16 << 20

// ParseReport reads a graph run's summary.json (name is its path, for the
// messages) as --rerun-failed reads it back: one JSON object whose jobs
// each have a key and a known state.
func ParseReport(name string, data []byte) (*Report, error) {
	if len(data) > MaxReportSize {
		return nil, fmt.Errorf("%s is over %d bytes; it is not the summary.json miles-ci ci writes", name, MaxReportSize)
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s is not the summary.json of a miles-ci ci run: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s holds more than one JSON value; it must be one summary.json object", name)
	}
	if r.Jobs == nil {
		return nil, fmt.Errorf("%s lists no jobs; it must be the summary.json of a miles-ci ci run (a single shard's is miles-ci run's)", name)
	}
	seen := map[string]bool{}
	for i, j := range r.Jobs {
		if j.Key == "" || !slices.Contains(knownStates, j.State) {
			return nil, fmt.Errorf("%s: job %d (%q) has state %q; every job has a key and one of the states miles-ci ci writes", name, i+1, j.Key, j.State)
		}
		if j.Shard != nil && (*j.Shard < 0 || *j.Shard >= max(j.Shards, 1)) {
			return nil, fmt.Errorf("%s: job %s has shard %d of %d; shards run from 0 to shards-1", name, j.Key, *j.Shard, j.Shards)
		}
		if seen[j.Unit()] {
			return nil, fmt.Errorf("%s lists %s twice", name, j.Unit())
		}
		seen[j.Unit()] = true
	}
	return &r, nil
}

var knownStates = []State{Queued, Running, Passed, Failed, Cancelled, Skipped, NotRun, Excluded, NotModelled, WouldRun}
