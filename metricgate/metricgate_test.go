package metricgate

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// Fixtures of a checkout's gate, in the shape Miles' files declare it
// (written here, not copied): gate.py's evaluate_gate signature, register.py's
// GATE_DEFAULTS and constraints.py's CONSTRAINT_SCHEMA.
const (
	gateDeclared = `def evaluate_gate(
    test_filename: str,
    merged_record_path: str,
    store,
    *,
    registry=None,
    history_limit: int = 20,
):
    pass
`
	gateExecuting = `def evaluate_gate(test_filename, merged_record_path, store, *, executing_suite: str, registry=None, history_limit: int = 3):
    pass
`
	registerPy = `GATE_DEFAULTS: dict[str, dict] = {
    "train/ppo_kl": {
        "steps": "all",
        "constraint": {"rel_up": 0.5, "abs_floor_up": 0.02, "rel_down": 0.8, "abs_floor_down": 0.02},
    },
    "rollout/mismatch": {"steps": "last", "constraint": {"rel_up": 1.0, "abs_floor_up": 0.1, "rel_down": 1}},
}
`
	constraintsPy = `CONSTRAINT_SCHEMA: dict[str, tuple[str, bool, object]] = {
    "rel_up": ("float_nonneg", False, 0.0),
    "abs_floor_up": ("float_nonneg", False, 0.0),
    "rel_down": ("float_nonneg", False, 0.0),
    "abs_floor_down": ("float_nonneg", False, 0.0),
}
`
)

func checkout(files map[string]string) func(string) ([]byte, error) {
	return func(rel string) ([]byte, error) {
		s, ok := files[rel]
		if !ok {
			return nil, nil
		}
		return []byte(s), nil
	}
}

func testForm(t *testing.T, gate string) Form {
	t.Helper()
	f, err := ReadForm(checkout(map[string]string{GateFile: gate, RegisterFile: registerPy, ConstraintsFile: constraintsPy}))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestReadForm(t *testing.T) {
	f := testForm(t, gateDeclared)
	if f.Name != "31f1ca9" || f.Suite != DeclaredSuite || f.HistoryLimit != 20 {
		t.Errorf("wanted the declared-suite form with 20 values, got %+v", f)
	}
	if !f.WritesBaseline("nightly") || !f.WritesBaseline("weekly") || f.WritesBaseline("regular") || f.WritesBaseline("release") {
		t.Errorf("wanted nightly and weekly to write the baseline, got %v", f.BaselineCadences)
	}
	f = testForm(t, gateExecuting)
	if f.Name != "executing-suite" || f.Suite != ExecutingSuite || f.HistoryLimit != 3 {
		t.Errorf("wanted the executing-suite form with 3 values, got %+v", f)
	}
	if _, err := ReadForm(checkout(nil)); !errors.Is(err, ErrNoGate) {
		t.Errorf("wanted ErrNoGate for a checkout without gate.py, got %v", err)
	}
	for name, files := range map[string]map[string]string{
		"no GATE_DEFAULTS":    {GateFile: gateDeclared, RegisterFile: "X = 1\n"},
		"defaults not a dict": {GateFile: gateDeclared, RegisterFile: "GATE_DEFAULTS = [1]\n"},
		"computed defaults":   {GateFile: gateDeclared, RegisterFile: "GATE_DEFAULTS = dict(a=1)\n"},
		"schema ahead":        {GateFile: gateDeclared, RegisterFile: registerPy, ConstraintsFile: strings.Replace(constraintsPy, `"rel_up"`, `"rel_side"`, 1)},
		"no evaluate_gate":    {GateFile: "def other():\n    pass\n", RegisterFile: registerPy},
		"no register.py":      {GateFile: gateDeclared},
	} {
		if _, err := ReadForm(checkout(files)); err == nil || errors.Is(err, ErrNoGate) {
			t.Errorf("%s: wanted an error naming the file, got %v", name, err)
		}
	}
}

func TestParseDeclarations(t *testing.T) {
	form := testForm(t, gateDeclared)
	prefix := "tests/e2e/test_x.py: register_ci_gate()"
	for _, tc := range []struct {
		name, src string
		keys      [][2]string // steps_key, constraint_key of each spec
		err       string
	}{
		{name: "defaults", src: `register_ci_gate(metric_key="train/ppo_kl")`,
			keys: [][2]string{{`"all"`, `{"abs_floor_down":0.02,"abs_floor_up":0.02,"rel_down":0.8,"rel_up":0.5}`}}},
		{name: "an int stays an int in the key", src: `register_ci_gate(metric_key="rollout/mismatch")`,
			keys: [][2]string{{`"last"`, `{"abs_floor_up":0.1,"rel_down":1,"rel_up":1.0}`}}},
		{name: "written literals as written", src: "register_ci_gate(\n    steps=[0x1, 0],\n    metric_key='m',\n    constraint={'rel_down': 1e20, 'rel_up': 1_0, 'abs_floor_up': -0.0,},\n)",
			keys: [][2]string{{`[1,0]`, `{"abs_floor_up":-0.0,"rel_down":1e+20,"rel_up":10}`}}},
		{name: "a written field wins over the table", src: `register_ci_gate(metric_key="train/ppo_kl", steps=[2], constraint={"abs_floor_up": 1e-3, "rel_down": 0})`,
			keys: [][2]string{{`[2]`, `{"abs_floor_up":0.001,"rel_down":0}`}}},
		{name: "only top-level calls", src: "if True:\n    register_ci_gate(metric_key=1)\nregister_ci_gate(metric_key='m', steps='last', constraint={'rel_up': 1, 'rel_down': 1})",
			keys: [][2]string{{`"last"`, `{"rel_down":1,"rel_up":1}`}}},
		{name: "positional", src: `register_ci_gate("m", steps="last")`, err: prefix + " takes only keyword arguments (got 1 positional)"},
		{name: "unknown", src: `register_ci_gate(metric_key="m", threshold=1)`, err: prefix + ": unknown argument 'threshold'; valid: ['allowlist_reason', 'constraint', 'enforce', 'metric_key', 'steps']"},
		{name: "kwargs", src: `register_ci_gate(metric_key="m", **kw)`, err: prefix + ": **kwargs are not supported"},
		{name: "tuple", src: `register_ci_gate(metric_key="m", steps=(0, 1))`, err: prefix + ": steps must be a literal (got Tuple)"},
		{name: "name", src: `register_ci_gate(metric_key=KEY)`, err: prefix + ": metric_key must be a literal (got Name)"},
		{name: "double minus", src: `register_ci_gate(metric_key="m", steps=[--1])`, err: prefix + ": steps must be a literal (got UnaryOp)"},
		{name: "dict unpacking", src: `register_ci_gate(metric_key="m", constraint={**c})`, err: prefix + ": constraint dict unpacking (**) is not allowed"},
		{name: "dict key", src: `register_ci_gate(metric_key="m", constraint={1: 2})`, err: prefix + ": constraint dict keys must be string literals"},
		{name: "duplicate key", src: `register_ci_gate(metric_key="m", constraint={"rel_up": 1, "rel_up": 2})`, err: prefix + ": constraint duplicate key 'rel_up'"},
		{name: "no metric", src: `register_ci_gate(steps="last")`, err: prefix + ": metric_key is required"},
		{name: "no default", src: `register_ci_gate(metric_key="custom/loss")`, err: prefix + ": steps is required (metric_key 'custom/loss' has no GATE_DEFAULTS entry)"},
		{name: "metric not a string", src: `register_ci_gate(metric_key=5, steps="last", constraint={"rel_up": 1, "rel_down": 1})`, err: prefix + ": metric_key must be a string"},
		{name: "steps word", src: `register_ci_gate(metric_key="m", steps="first", constraint={})`, err: prefix + `: steps must be "last", "all", or a non-empty list of step indices`},
		{name: "steps empty", src: `register_ci_gate(metric_key="m", steps=[], constraint={})`, err: prefix + ": steps: must be a non-empty list of step indices"},
		{name: "steps bool", src: `register_ci_gate(metric_key="m", steps=[True], constraint={})`, err: prefix + ": steps: step indices must be integers"},
		{name: "steps negative", src: `register_ci_gate(metric_key="m", steps=[-1], constraint={})`, err: prefix + ": steps: step indices must be >= 0"},
		{name: "steps duplicate", src: `register_ci_gate(metric_key="m", steps=[1, 0x1], constraint={})`, err: prefix + ": steps: duplicate step 1"},
		{name: "constraint list", src: `register_ci_gate(metric_key="m", steps="last", constraint=[1])`, err: prefix + ": constraint must be a dict"},
		{name: "constraint key", src: `register_ci_gate(metric_key="m", steps="last", constraint={"rel_side": 1})`, err: prefix + ": unknown key 'rel_side' for constraint; valid: ['abs_floor_down', 'abs_floor_up', 'rel_down', 'rel_up']"},
		{name: "no upper", src: `register_ci_gate(metric_key="m", steps="last", constraint={"rel_down": 1})`, err: prefix + ": constraint requires at least one upper band param ('rel_up' or 'abs_floor_up')"},
		{name: "no lower", src: `register_ci_gate(metric_key="m", steps="last", constraint={"rel_up": 1})`, err: prefix + ": constraint requires at least one lower band param ('rel_down' or 'abs_floor_down')"},
		{name: "bool param", src: `register_ci_gate(metric_key="m", steps="last", constraint={"rel_up": True, "rel_down": 1})`, err: prefix + ": constraint param 'rel_up': must be a number"},
		{name: "negative param", src: `register_ci_gate(metric_key="m", steps="last", constraint={"rel_up": 1, "rel_down": -0.5})`, err: prefix + ": constraint param 'rel_down': must be a finite number >= 0"},
		{name: "infinite param", src: `register_ci_gate(metric_key="m", steps="last", constraint={"rel_up": 1e400, "rel_down": 1})`, err: prefix + ": constraint param 'rel_up': must be a finite number >= 0"},
		{name: "enforce", src: `register_ci_gate(metric_key="train/ppo_kl", enforce="yes")`, err: prefix + ": enforce must be a boolean"},
		{name: "allowlist", src: `register_ci_gate(metric_key="train/ppo_kl", allowlist_reason=1)`, err: prefix + ": allowlist_reason must be a string or None"},
		{name: "syntax", src: `register_ci_gate(metric_key="m"`, err: "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specs, err := ParseDeclarations("tests/e2e/test_x.py", []byte(tc.src+"\n"), form)
			if tc.err != "" {
				if err == nil || !errors.Is(err, ErrDeclaration) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("wanted an error holding %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(specs) != len(tc.keys) {
				t.Fatalf("wanted %d specs, got %+v", len(tc.keys), specs)
			}
			for i, k := range tc.keys {
				if specs[i].StepsKey != k[0] || specs[i].ConstraintKey != k[1] {
					t.Errorf("spec %d: wanted keys %q %q, got %q %q", i, k[0], k[1], specs[i].StepsKey, specs[i].ConstraintKey)
				}
			}
		})
	}
}

func TestParseRecord(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		metrics    []string
		err        string
	}{
		{name: "markers and bare constants", text: `{"metric": "a", "series": [[0, "NaN"], [1, Infinity], [2, -Infinity]]}` + "\n", metrics: []string{"a"}},
		{name: "universal newlines and Python's whitespace", text: "\ufeff"[:0] + "  {\"metric\": \"a\", \"series\": []}\r\n\u00a0\x1c\r{\"metric\": \"b\", \"series\": []}\u2003", metrics: []string{"a", "b"}},
		{name: "a metric that is not a string is never looked up", text: `{"metric": 5, "series": [[0, 1]]}`, metrics: []string{}},
		{name: "not JSON", text: `{"metric": "a", "series": [[0, 1]],}`, err: "line 1"},
		{name: "extra data", text: `{"metric": "a", "series": []} {}`, err: "Extra data"},
		{name: "a byte order mark", text: "\ufeff{\"metric\": \"a\", \"series\": []}", err: "Unexpected UTF-8 BOM"},
		{name: "not UTF-8", text: "{\"metric\": \"\xff\", \"series\": []}", err: "not UTF-8"},
		{name: "no series", text: `{"metric": "a"}`, err: `no "series"`},
		{name: "no metric", text: `{"series": []}`, err: `no "metric"`},
		{name: "a list line", text: `[1, 2]`, err: "not an object"},
		{name: "series not iterable", text: `{"metric": "a", "series": 5}`, err: "not a list of points"},
		{name: "an unhashable metric", text: `{"metric": ["a"], "series": []}`, err: "cannot use as a key"},
		{name: "a control character", text: "{\"metric\": \"a\tb\", \"series\": []}", err: "control character"},
		{name: "an integer of 5000 digits", text: `{"metric": "a", "series": [[0, ` + strings.Repeat("9", 5000) + `]]}`, err: "4300 digits"},
		{name: "nested too deep", text: `{"metric": "a", "series": ` + strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}`, err: "recursion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRecord(tc.text)
			if tc.err != "" {
				if err == nil || !errors.Is(err, ErrRecord) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("wanted an error holding %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(r.Metrics(), ","); got != strings.Join(tc.metrics, ",") {
				t.Errorf("wanted metrics %q, got %q", tc.metrics, got)
			}
		})
	}
}

// history is a store of a few trusted values per coordinate.
type history map[string][]float64

func (h history) Recent(_ context.Context, id Identity, c Coordinate, limit int) ([]float64, error) {
	v := h[c.Metric+"@"+c.Step.String()]
	return v[:min(len(v), limit)], nil
}

func TestEvaluate(t *testing.T) {
	form := testForm(t, gateDeclared)
	id := Identity{TestPath: "tests/e2e/test_x.py", Backend: "cuda", Suite: "stage-c-4-gpu-h200"}
	src := `register_ci_gate(metric_key="train/ppo_kl")
register_ci_gate(metric_key="loss", steps="last", constraint={"rel_up": 0.1, "abs_floor_down": 0.5})
register_ci_gate(metric_key="loss", steps="last", constraint={"rel_up": 0.1, "abs_floor_down": 0.5}, enforce=True)
register_ci_gate(metric_key="gone", steps=[3], constraint={"rel_up": 1, "rel_down": 1})
register_ci_gate(metric_key="nan", steps="all", constraint={"rel_up": 1, "rel_down": 1})
`
	specs, err := ParseDeclarations(id.TestPath, []byte(src), form)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ParseRecord(`{"metric": "train/ppo_kl", "series": [[0, 0.011], [1, 0.5]]}
{"metric": "loss", "series": [[0, 3], [7, 2.5], [null, "x"]]}
{"metric": "gone", "series": [[0, 1]]}
{"metric": "nan", "series": [[0, 1.0], [1, "NaN"]]}
`)
	if err != nil {
		t.Fatal(err)
	}
	h := history{"train/ppo_kl@0": {0.01, 0.012}, "train/ppo_kl@1": {0.02}, "loss@-1": {2.0, 2.2, 2.1, 9, 9, 9}}
	form.HistoryLimit = 3
	v := Evaluate(context.Background(), form, id, specs, &rec, nil, h)
	want := []struct {
		status Status
		step   string
		reason string
	}{
		{StatusPass, "0", "ok"},
		{StatusFail, "1", "historical: cur=0.5 vs mean=0.02 (n=1) outside [0, 0.04]"},
		{StatusFail, "-1", "historical: cur=2.5 vs mean=2.1 (n=3) outside [1.6, 2.31]"},
		{StatusFail, "-1", "historical: cur=2.5 vs mean=2.1 (n=3) outside [1.6, 2.31]"},
		{StatusError, "<nil>", "metric 'gone' (steps=[3]): steps: required step 3 missing from series"},
		{StatusError, "<nil>", "metric 'nan' (steps='all'): all: non-finite value nan at step 1"},
	}
	if v.Verdict != NotTrusted || len(v.Coordinates) != len(want) {
		t.Fatalf("wanted a not-trusted verdict of %d coordinates, got %+v", len(want), v)
	}
	for i, w := range want {
		c := v.Coordinates[i]
		if c.Status != w.status || c.Step.String() != w.step || c.Reason != w.reason {
			t.Errorf("coordinate %d: wanted %s at %s (%q), got %s at %s (%q)", i, w.status, w.step, w.reason, c.Status, c.Step, c.Reason)
		}
	}
	if c := v.Coordinates[2]; c.AtStep.String() != "7" || float64(*c.Current) != 2.5 || c.BaselineN != 3 {
		t.Errorf("wanted the last point (step 7, 2.5) against 3 values, got %+v", c)
	}
	// The duplicated declaration stores one value; an error stores none.
	if s := v.Samples(); len(s) != 3 {
		t.Errorf("wanted 3 samples (ppo_kl 0 and 1, loss once), got %+v", s)
	}
	// A cold start: no store is no history.
	v = Evaluate(context.Background(), form, id, specs[:1], &rec, nil, nil)
	if v.Verdict != Trusted || v.Coordinates[0].Status != StatusInactive || v.Coordinates[0].Reason != "ok; historical: cold start (0 trusted baselines)" {
		t.Errorf("wanted a trusted cold start, got %+v", v)
	}
	if got := v.ShadowLines()[0]; got != "[CI Gate][shadow] tests/e2e/test_x.py: TRUSTED (2 metric(s))" {
		t.Errorf("wanted Miles' shadow line, got %q", got)
	}
	// No declaration: trusted without a record; a declaration without one: no verdict.
	if v := Evaluate(context.Background(), form, id, nil, nil, errors.New("x"), nil); v.Verdict != Trusted {
		t.Errorf("wanted a file without declarations trusted, got %+v", v)
	}
	if v := Evaluate(context.Background(), form, id, specs, nil, errors.New("no record"), nil); v.Verdict != NoVerdict || v.Error != "no record" {
		t.Errorf("wanted no verdict without a record, got %+v", v)
	}
	// A point Python cannot take the length of raises past the gate.
	bad, _ := ParseRecord(`{"metric": "train/ppo_kl", "series": [7]}`)
	if v := Evaluate(context.Background(), form, id, specs[:1], &bad, nil, nil); v.Verdict != NoVerdict || !strings.Contains(v.Error, "TypeError") {
		t.Errorf("wanted no verdict for a point that is a number, got %+v", v)
	}
}

func TestJudgeBand(t *testing.T) {
	c := Constraint{RelUp: 0.5, AbsFloorUp: 0.1, RelDown: 0.8, AbsFloorDown: 0.1}
	for _, tc := range []struct{ cur, ref, lo, hi float64 }{
		{1, 1, 0.19999999999999996, 1.5},      // rel wins on both sides
		{0, 0.01, -0.09000000000000001, 0.11}, // the floors keep a value near zero from flagging
		{-1, -1, -1.8, -0.5},                  // bands scale from |ref|
	} {
		lo, hi, ok := c.judge(tc.cur, tc.ref)
		if lo != tc.lo || hi != tc.hi || ok != (tc.lo <= tc.cur && tc.cur <= tc.hi) {
			t.Errorf("judge(%v, %v): wanted [%v, %v], got [%v, %v] %v", tc.cur, tc.ref, tc.lo, tc.hi, lo, hi, ok)
		}
	}
}

func TestProvenanceFromEnv(t *testing.T) {
	env := map[string]string{"GITHUB_COMMIT_NAME": "abc123_42", "GITHUB_RUN_ID": " 7_0 ", "GITHUB_RUN_ATTEMPT": "x", "GITHUB_EVENT_NAME": "schedule"}
	p := ProvenanceFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if p.CommitSHA != "abc123" || *p.PRNumber != 42 || *p.RunID != 70 || p.RunAttempt != nil || *p.Event != "schedule" || p.Ref != nil {
		t.Errorf("wanted abc123, PR 42, run 70, no attempt, schedule, no ref; got %+v", p)
	}
	env = map[string]string{"GITHUB_SHA": "def", "GITHUB_COMMIT_NAME": "abc_non-pr"}
	if p := ProvenanceFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); p.CommitSHA != "def" || p.PRNumber != nil {
		t.Errorf("wanted GITHUB_SHA and no PR, got %+v", p)
	}
}

func TestStepsRepr(t *testing.T) {
	s := Steps{Mode: "list", List: []*big.Int{big.NewInt(0), big.NewInt(12)}}
	if s.repr() != "[0, 12]" || (Steps{Mode: "last"}).repr() != "'last'" {
		t.Errorf("wanted Python's reprs, got %s %s", s.repr(), Steps{Mode: "last"}.repr())
	}
}
