package metricgate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// Status is a coordinate's outcome (GateStatus).
type Status string

// The outcomes of one coordinate.
const (
	// StatusPass: within the band around its trusted mean.
	StatusPass Status = "pass"
	// StatusFail: outside it.
	StatusFail Status = "fail"
	// StatusInactive: no trusted history yet (a cold start), not a failure.
	StatusInactive Status = "inactive"
	// StatusError: the metric is missing or its value cannot be selected.
	StatusError Status = "error"
)

// Verdict is a file's gate verdict.
type Verdict string

// The verdicts of one file.
const (
	// Trusted: every coordinate passed or was inactive (or none declared).
	Trusted Verdict = "trusted"
	// NotTrusted: a coordinate failed or errored.
	NotTrusted Verdict = "not-trusted"
	// NoVerdict: the gate could not judge the file (its declarations or
	// record cannot be read, or the store failed); Miles' hook logs a
	// warning and writes nothing.
	NoVerdict Verdict = "error"
)

// Float is a float in JSON: a number, or "NaN", "Infinity", "-Infinity"
// (the record's markers) where JSON has none.
type Float float64

// MarshalJSON writes Python's repr of the float, or a marker.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Infinity"`), nil
	}
	return []byte(pysource.FloatRepr(v)), nil
}

// UnmarshalJSON reads a number or a marker.
func (f *Float) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		v, ok := nonFinite[s]
		if !ok {
			return fmt.Errorf("%q is not a number", s)
		}
		*f = Float(v)
		return nil
	}
	var v float64
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// Band is the corridor an active coordinate was judged against.
type Band struct {
	Lo Float `json:"lo"`
	Hi Float `json:"hi"`
}

// CoordinateVerdict is one coordinate's verdict (MetricGateResult).
type CoordinateVerdict struct {
	Metric        string `json:"metric"`
	StepsKey      string `json:"steps_key"`
	ConstraintKey string `json:"constraint_key"`
	// Step is the coordinate's step (-1 for "last"); nil on ERROR.
	Step *big.Int `json:"step"`
	// AtStep is the step the value came from; nil on ERROR or when the
	// point had no int step.
	AtStep *big.Int `json:"at_step"`
	Status Status   `json:"status"`
	// Current is the value judged; nil on ERROR.
	Current *Float `json:"current"`
	// BaselineN and BaselineMean are the trusted history it was judged
	// against (the mean nil when inactive).
	BaselineN    int    `json:"baseline_n"`
	BaselineMean *Float `json:"baseline_mean"`
	// Band is [lo, hi] when the check was active.
	Band *Band `json:"band"`
	// Reason is Miles' reason text.
	Reason string `json:"reason"`
}

// Trusted says whether the coordinate passed or was inactive.
func (c CoordinateVerdict) Trusted() bool {
	return c.Status == StatusPass || c.Status == StatusInactive
}

// FileVerdict is one test file's gate verdict (GateResult).
type FileVerdict struct {
	Identity
	// Verdict is trusted, not-trusted or error (no verdict).
	Verdict Verdict `json:"verdict"`
	// Error says why there is no verdict.
	Error string `json:"error,omitempty"`
	// Coordinates are the coordinates' verdicts, in declaration order.
	Coordinates []CoordinateVerdict `json:"coordinates"`
}

func (v FileVerdict) seal() FileVerdict {
	v.Verdict = Trusted
	for _, c := range v.Coordinates {
		if !c.Trusted() {
			v.Verdict = NotTrusted
		}
	}
	return v
}

func (v FileVerdict) failed(err error) FileVerdict {
	v.Verdict, v.Error, v.Coordinates = NoVerdict, err.Error(), []CoordinateVerdict{}
	return v
}

// Failed is the verdict of a file the gate could not judge.
func Failed(id Identity, err error) FileVerdict {
	return FileVerdict{Identity: id}.failed(err)
}

// Counts counts the coordinates by status.
func (v FileVerdict) Counts() map[Status]int {
	n := map[Status]int{}
	for _, c := range v.Coordinates {
		n[c.Status]++
	}
	return n
}

// Sample is one value a baseline-writing run stores (MetricSample).
type Sample struct {
	Coordinate
	Value float64
}

// Samples are the values run_gate_hook stores for a verdict: one per
// coordinate with a value, a coordinate declared twice (the same literals)
// once.
func (v FileVerdict) Samples() []Sample {
	var out []Sample
	seen := map[string]bool{}
	for _, c := range v.Coordinates {
		if c.Current == nil || c.Step == nil {
			continue
		}
		key := c.Metric + "\x00" + c.StepsKey + "\x00" + c.ConstraintKey + "\x00" + c.Step.String()
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, Sample{Coordinate{c.Metric, c.StepsKey, c.ConstraintKey, c.Step}, float64(*c.Current)})
	}
	return out
}

// Summary is one line for the verdict, e.g. "trusted (3 coordinates: 2
// pass, 1 inactive)".
func (v FileVerdict) Summary() string {
	if v.Verdict == NoVerdict {
		return "no verdict: " + v.Error
	}
	if len(v.Coordinates) == 0 {
		return string(v.Verdict) + " (no gate declared)"
	}
	n := v.Counts()
	var parts []string
	for _, s := range []Status{StatusPass, StatusFail, StatusInactive, StatusError} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	return fmt.Sprintf("%s (%d coordinate(s): %s)", v.Verdict, len(v.Coordinates), strings.Join(parts, ", "))
}

// ShadowLines are the step-summary lines run_gate_hook writes for a run
// that stores nothing: "[CI Gate][shadow] FILE: TRUSTED (N metric(s))" and
// one "  - METRIC (step=S): REASON" per coordinate.
func (v FileVerdict) ShadowLines() []string {
	word := "TRUSTED"
	if v.Verdict != Trusted {
		word = "NOT-TRUSTED"
	}
	lines := []string{fmt.Sprintf("[CI Gate][shadow] %s: %s (%d metric(s))", v.TestPath, word, len(v.Coordinates))}
	for _, c := range v.Coordinates {
		lines = append(lines, fmt.Sprintf("  - %s (step=%s): %s", c.Metric, stepRepr(c.Step), c.Reason))
	}
	return lines
}

// Describe is one coordinate as a line: its status, metric, step, value,
// and its baseline and band or why it has none.
func (c CoordinateVerdict) Describe() string {
	where := c.Metric
	if c.Step != nil {
		where += " step " + c.Step.String()
		if c.Step.Sign() < 0 && c.AtStep != nil {
			where = c.Metric + " last (step " + c.AtStep.String() + ")"
		} else if c.Step.Sign() < 0 {
			where = c.Metric + " last"
		}
	}
	text := fmt.Sprintf("%-8s  %s", c.Status, where)
	switch {
	case c.Current == nil:
		text += ": " + c.Reason
	case c.BaselineMean == nil:
		text += fmt.Sprintf(": %s, no trusted history (cold start)", pyG6(float64(*c.Current)))
	default:
		text += fmt.Sprintf(": %s vs mean %s of %d, band [%s, %s]", pyG6(float64(*c.Current)), pyG6(float64(*c.BaselineMean)), c.BaselineN, pyG6(float64(c.Band.Lo)), pyG6(float64(c.Band.Hi)))
	}
	return text
}
