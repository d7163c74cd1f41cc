package typedjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type testEntry struct {
	Name  string
	Value string
}

type testPart struct {
	Index int
	Size  int
}

type testPlan struct {
	Suite     string
	EstTime   float64
	RunsOn    []string
	Partition *testPart
	Enabled   []*testPart
	Outputs   []*testEntry
	Skip      *bool
}

type testAnswer struct {
	Plans    []*testPlan `typedjson:"items"`
	Json     string
	Messages []string
}

type testOne struct {
	Suite    string
	Json     string
	Messages []string
}

func TestFieldName(t *testing.T) {
	for key, want := range map[string]string{"est_time": "EstTime", "hw": "Hw", "id": "Index", "run_attempt": "RunAttempt", "gpu-model": "GpuModel"} {
		if got := FieldName(key); got != want {
			t.Errorf("FieldName(%q): wanted %q, got %q", key, want, got)
		}
	}
}

func TestFill(t *testing.T) {
	js := `[{"suite":"stage-a-cpu","est_time":2.5,"runs_on":["h200","2gpu"],"partition":{"id":1,"size":4},
		"enabled":[{"id":0,"size":1}],"outputs":{"b":"2","a":"1"},"skip":null}]`
	var got testAnswer
	if err := Fill(&got, []byte(js), map[string]any{"Json": "J", "Messages": []string{"m"}}); err != nil {
		t.Fatal(err)
	}
	want := testAnswer{Plans: []*testPlan{{Suite: "stage-a-cpu", EstTime: 2.5, RunsOn: []string{"h200", "2gpu"},
		Partition: &testPart{Index: 1, Size: 4}, Enabled: []*testPart{{Index: 0, Size: 1}},
		Outputs: []*testEntry{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}}}}, Json: "J", Messages: []string{"m"}}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("wanted %s, got %s", w, g)
	}
	var one testOne
	if err := Fill(&one, []byte(`{"suite":"s"}`), nil); err != nil || one.Suite != "s" {
		t.Errorf("wanted suite %q, got %q (%v)", "s", one.Suite, err)
	}
}

func TestFillRefuses(t *testing.T) {
	for _, c := range []struct{ js, want string }{
		{`{"suite":"s","new_key":1}`, `testOne has no field NewKey for the key "new_key"`},
		{`{"json":"x"}`, `testOne has no field Json for the key "json"`},
		{`{"suite":3}`, `testOne.suite is string, the JSON holds json.Number`},
		{`[{"suite":"s"}]`, `testOne has no field tagged items`},
		{`{"suite":`, `unexpected EOF`},
	} {
		var one testOne
		err := Fill(&one, []byte(c.js), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Fill(%s): wanted an error with %q, got %v", c.js, c.want, err)
		}
	}
	var ans testAnswer
	if err := Fill(&ans, []byte(`[{"partition":{"id":1.5}}]`), nil); err == nil || !strings.Contains(err.Error(), "is an integer, the JSON holds 1.5") {
		t.Errorf("wanted an error naming 1.5, got %v", err)
	}
	if err := Fill(&ans, []byte(`[]`), map[string]any{"Json": 1}); err == nil || !strings.Contains(err.Error(), "testAnswer.Json is string, not int") {
		t.Errorf("wanted an error naming Json's type, got %v", err)
	}
}
