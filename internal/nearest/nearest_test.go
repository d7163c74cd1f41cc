package nearest

import "testing"

func TestName(t *testing.T) {
	stages := []string{"stage-a-cpu", "stage-b-cpu", "stage-c-2-gpu-h200", "cpu", "cuda", "rocm"}
	labels := []string{"run-ci-megatron", "run-ci-fsdp", "run-ci-all", "run-ci-image"}
	events := []string{"pull_request", "push", "schedule", "workflow_dispatch", "local"}
	for _, c := range []struct {
		name  string
		known []string
		want  string
	}{
		{"stage-z", stages, "stage-a-cpu"},
		{"stage-zz", stages, "stage-a-cpu"},
		{"stage-a-cpuu", stages, "stage-a-cpu"},
		{"Stage-B-CPU", stages, "stage-b-cpu"},
		{"cdua", stages, "cuda"},
		{"roc", stages, "rocm"},
		{"run-ci-megatorn", labels, "run-ci-megatron"},
		{"run-ci-megatron-lm", labels, "run-ci-megatron"},
		{"pul_request", events, "pull_request"},
		{"schedul", events, "schedule"},
		{"workflow-dispatch", events, "workflow_dispatch"},
		{"nightly", events, ""},
		{"zzzzzzzzzz", stages, ""},
		{"", stages, ""},
		{"x", nil, ""},
	} {
		if got := Name(c.name, c.known); got != c.want {
			t.Errorf("Name(%q): wanted %q, got %q", c.name, c.want, got)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"megatorn", "megatron", 1}} {
		if got := distance(c.a, c.b); got != c.want {
			t.Errorf("distance(%q, %q): wanted %d, got %d", c.a, c.b, c.want, got)
		}
	}
}

func FuzzName(f *testing.F) {
	f.Add("stage-z", "stage-a-cpu")
	f.Fuzz(func(t *testing.T, name, known string) {
		if got := Name(name, []string{known}); got != "" && got != known {
			t.Fatalf("Name(%q, [%q]) = %q, not the known name", name, known, got)
		}
	})
}
