package cirun

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestRerunFailed: attempt 1 fails one stage-a-cpu shard (so the GPU
// stages are skipped); attempt 2, given attempt 1's passed units, runs only
// that shard and the jobs whose if: now holds, and keeps the rest.
func TestRerunFailed(t *testing.T) {
	pr := Event{Name: EventPullRequest}
	host := Options{Host: Host{StandIn: true}, Attempt: 1}
	first := run(t, prTest, pr, &fake{fail: map[string]bool{"pr-test/stage-a-cpu/1": true}}, host)
	if first.ExitStatus() != 1 {
		t.Fatalf("attempt 1: wanted exit 1, got %d", first.ExitStatus())
	}
	// What a re-run reads back is summary.json: go through JSON.
	data, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	var prev Report
	if err := json.Unmarshal(data, &prev); err != nil {
		t.Fatal(err)
	}
	if got := prev.ToRerun(); len(got) != 1 || got[0].Unit() != "pr-test/stage-a-cpu#1" {
		t.Fatalf("wanted stage-a-cpu#1 to re-run, got %v", got)
	}
	f := &fake{}
	again := host
	again.Attempt, again.Previous = 2, prev.Kept(nil)
	second := run(t, prTest, pr, f, again)
	if second.ExitStatus() != 0 {
		t.Fatalf("attempt 2: wanted exit 0, got %d\n%s", second.ExitStatus(), second.Text())
	}
	wantCalls := []string{"pr-test/docker-build/0", "pr-test/resolve-ci-image/0", "pr-test/stage-a-cpu/1",
		"pr-test/stage-c-2-gpu-h200/0", "pr-test/stage-c-2-gpu-h200/1", "pr-test/stage-c-8-gpu-h200/0"}
	slices.Sort(f.calls)
	if !slices.Equal(f.calls, wantCalls) {
		t.Errorf("wanted the executor called for %v, got %v", wantCalls, f.calls)
	}
	got := map[string]string{}
	for _, j := range second.Jobs {
		got[j.Unit()] = j.AttemptText()
	}
	for unit, want := range map[string]string{
		"pr-test/resolve-ci-policy": "reused (attempt 1)", "pr-test/stage-a-cpu#0": "reused (attempt 1)",
		"pr-test/stage-a-cpu#1": "attempt 2", "pr-test/stage-c-8-gpu-h200": "attempt 2",
	} {
		if got[unit] != want {
			t.Errorf("%s: wanted %q, got %q", unit, want, got[unit])
		}
	}
	if text := second.Text(); !strings.Contains(text, "attempt 2 re-ran") || !strings.Contains(text, "reused (attempt 1)") {
		t.Errorf("wanted the text to say what was reused, got\n%s", text)
	}
	// The kept policy job's outputs reach its dependents: the GPU stages
	// read its cadence and skipped_stages.
	for _, j := range second.Jobs {
		if j.Key == "pr-test/resolve-ci-policy" && j.Outputs["cadence"] != "regular" {
			t.Errorf("wanted the reused policy job's outputs kept, got %v", j.Outputs)
		}
	}
}

func TestRunFactsDifferences(t *testing.T) {
	base := FactsOf(Event{Name: EventPullRequest, Labels: []string{"b", "a"}, PRBody: "x", Inputs: map[string]string{}}, "abc", "miles-ci")
	if d := base.Differences(base); len(d) != 0 {
		t.Errorf("wanted no difference, got %v", d)
	}
	for _, tc := range []struct {
		name string
		now  RunFacts
		want []string
	}{
		{"another commit", FactsOf(Event{Name: EventPullRequest, Labels: []string{"a", "b"}, PRBody: "x"}, "def", "miles-ci"),
			[]string{"checkout commit: abc then, def now"}},
		{"another event and planner", FactsOf(Event{Name: EventSchedule, Schedule: "0 15 * * 0-5"}, "abc", "checkout"),
			[]string{"event: pull_request then, schedule now", "schedule: (none) then, 0 15 * * 0-5 now", "PR labels: a,b then, (none) now",
				"PR description (sha256): 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 then, (none) now", "planner: miles-ci then, checkout now"}},
		{"an input", FactsOf(Event{Name: EventPullRequest, Labels: []string{"a", "b"}, PRBody: "x", Inputs: map[string]string{"ci_image_tag": "t"}}, "abc", "miles-ci"),
			[]string{"input ci_image_tag: (none) then, t now"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := base.Differences(tc.now); !slices.Equal(got, tc.want) {
				t.Errorf("wanted %q, got %q", tc.want, got)
			}
		})
	}
}

func TestParseReport(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", "{", "s.json is not the summary.json of a miles-ci ci run: unexpected EOF"},
		{"two values", `{"jobs":[]} {}`, "s.json holds more than one JSON value; it must be one summary.json object"},
		{"a shard's summary", `{"suite":"stage-a-cpu"}`, "s.json lists no jobs; it must be the summary.json of a miles-ci ci run (a single shard's is miles-ci run's)"},
		{"an unknown state", `{"jobs":[{"job":"a","state":"great"}]}`, `s.json: job 1 ("a") has state "great"; every job has a key and one of the states miles-ci ci writes`},
		{"a shard out of range", `{"jobs":[{"job":"a","state":"passed","shard":4,"shards":2}]}`, "s.json: job a has shard 4 of 2; shards run from 0 to shards-1"},
		{"a unit twice", `{"jobs":[{"job":"a","state":"passed"},{"job":"a","state":"failed"}]}`, "s.json lists a twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseReport("s.json", []byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Errorf("wanted %q, got %v", tc.want, err)
			}
		})
	}
}

func FuzzParseReport(f *testing.F) {
	f.Add([]byte(`{"run":{"run_id":"1","commit":"abc","planner":"miles-ci","event":"pull_request"},"run_attempt":1,"gpus":"none","cancelled":false,"jobs":[{"job":"pr-test/stage-a-cpu","state":"failed","shard":1,"shards":2,"run_attempt":1}]}`))
	f.Add([]byte(`{"jobs":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseReport("summary.json", data)
		if err != nil {
			return
		}
		r.ToRerun()
		r.Kept(nil)
	})
}
