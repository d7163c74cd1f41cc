package metricgate

import (
	"context"
	"testing"
)

// FuzzParseRecord: any text, a record the test under run wrote, is read or
// refused without a panic or a hang, and a record read is judged.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{
		`{"metric": "train/ppo_kl", "series": [[0, 0.1], [1, "NaN"], [null, Infinity]]}`,
		"{\"metric\": \"a\", \"series\": \"ab\"}\r\n{\"metric\": \"b\", \"series\": {\"x\": 1}}",
		`{"metric": "a", "series": [[1e400, -1e400], [123456789012345678901234567890, 2], [true, false]]}`,
		`[[[[[[[[[[]]]]]]]]]]`, `{"a": "\ud800\udc00\u0000"}`, "\ufeff{}", "",
	} {
		f.Add(s)
	}
	form := Form{HistoryLimit: 20}
	specs := []Spec{
		{Metric: "a", Steps: Steps{Mode: "all"}, StepsKey: `"all"`, ConstraintKey: "{}"},
		{Metric: "train/ppo_kl", Steps: Steps{Mode: "last"}, StepsKey: `"last"`, ConstraintKey: "{}"},
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseRecord(text)
		if err != nil {
			return
		}
		Evaluate(context.Background(), form, Identity{}, specs, &r, nil, nil)
	})
}

// FuzzParseDeclarations: any test file source is read or refused without a
// panic or a hang.
func FuzzParseDeclarations(f *testing.F) {
	for _, s := range []string{
		`register_ci_gate(metric_key="train/ppo_kl")`,
		`register_ci_gate(metric_key="m", steps=[0x1, 2_0], constraint={"rel_up": -0.0, "rel_down": 1e20})`,
		`register_ci_gate(metric_key="m", steps=[-(1)], constraint={**a, "b": [*c]})`,
		"register_ci_gate(metric_key=('a'\n 'b'), steps=(\"last\"), constraint={1: {2: 3}})",
		`register_ci_gate(*a, **b)`, `register_ci_gate(metric_key=f"x{y}", steps=[1 for _ in x])`,
	} {
		f.Add(s)
	}
	form := Form{HistoryLimit: 20, defaults: pyLit{kind: litDict, keys: []string{"train/ppo_kl"},
		elems: []pyLit{{kind: litDict, keys: []string{"steps"}, elems: []pyLit{{kind: litStr, s: "all"}}}}}}
	f.Fuzz(func(t *testing.T, src string) {
		ParseDeclarations("tests/e2e/test_x.py", []byte(src), form)
	})
}
