package comment

import (
	"testing"

	"github.com/radixark/miles-ci/pyjson"
)

// FuzzParseEvent holds parse_event to never panic, in every form, on any
// payload the decoder accepts.
func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"action":"created","issue":{"number":7,"pull_request":{}},"comment":{"id":3,"body":"/run-ci-short","user":{"login":"a","id":1,"type":"User"}},"sender":{"id":1},"repository":{"id":1072725553,"full_name":"radixark/miles"}}`))
	f.Add([]byte(`{"action":"created","comment":{"body":"/rerun-test tests/e2e/test_a.py\u3000"}}`))
	f.Add([]byte(`[1, 2.5, NaN, "\ud800"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		text, err := pyjson.ReadText(data)
		if err != nil {
			return
		}
		v, err := pyjson.Decode(text, pyjson.Strict)
		if err != nil {
			return
		}
		for _, form := range Forms {
			g := Default()
			g.Form = form
			g.ParseEvent(v)
		}
	})
}

// FuzzParsePolicy holds load_policy's checks to never panic.
func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(`{"version":2,"groups":{"add_label_access":{"repository_permissions":["write"],"user_ids":[5]},"repo_write_access":{"repository_permissions":["admin"]}},"commands":{"add_label":{"group":"add_label_access","allowed_labels":["run-ci-x",1]},"clear_labels":{"group":"repo_write_access"},"rerun_failed_ci":{"group":"x"},"run_test_file":{"group":"repo_write_access"}}}`))
	f.Add([]byte(`{"version":2,"groups":{},"commands":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := pyjson.DecodeBytes(data, pyjson.Strict)
		if err != nil {
			return
		}
		for _, form := range Forms {
			g := Default()
			g.Form = form
			g.ParsePolicy(v)
		}
	})
}

// FuzzDetect holds the form's detection to never panic on any script.
func FuzzDetect(f *testing.F) {
	f.Add([]byte("REPOSITORY = \"radixark/miles\"\nREPOSITORY_ID = 1072725553\nLABEL_PATTERN = re.compile(r\"x\")\n"))
	f.Add([]byte("def f(:\n"))
	f.Fuzz(func(t *testing.T, data []byte) { Detect(data) })
}

// FuzzPinValue holds the PR-body pin search to never panic and to find a
// value only where a line starts with the key.
func FuzzPinValue(f *testing.F) {
	f.Add("x\nci-image-tag: \u00a0t1\r\n", "ci-image-tag:")
	f.Fuzz(func(t *testing.T, body, key string) {
		if key == "" {
			return
		}
		if v, ok := pinValue(body, key); ok && v == "" {
			t.Errorf("pinValue(%q, %q) found an empty value", body, key)
		}
	})
}
