package policy

import (
	"reflect"
	"testing"
)

func TestResolveTrigger(t *testing.T) {
	tests := []struct {
		name    string
		trig    Trigger
		want    WorkflowPolicy
		wantErr string
	}{
		{name: "pr with labels, order kept, unsafe dropped", trig: Trigger{Event: "pull_request", PRLabelsJSON: `["run-ci-megatron","bug","run-ci-$x","bypass-fastfail","run-ci-a.b_c-d"]`},
			want: WorkflowPolicy{Cadence: Regular, RawLabels: []string{"run-ci-megatron", "bypass-fastfail", "run-ci-a.b_c-d"}, BypassFastfail: true}},
		{name: "pr nightly label", trig: Trigger{Event: "pull_request", PRLabelsJSON: `["nightly"]`},
			want: WorkflowPolicy{Cadence: Nightly, RawLabels: []string{"nightly"}, BypassFastfail: true}},
		{name: "pr no labels", trig: Trigger{Event: "pull_request", PRLabelsJSON: `[]`}, want: WorkflowPolicy{Cadence: Regular, RawLabels: []string{}}},
		{name: "pr labels not json", trig: Trigger{Event: "pull_request", PRLabelsJSON: `run-ci-all`},
			wantErr: `PR labels were not a JSON string array: "run-ci-all"; pass the label names, e.g. ["run-ci-megatron"]`},
		{name: "pr labels empty", trig: Trigger{Event: "pull_request"},
			wantErr: `PR labels were not a JSON string array: (empty); pass the label names, e.g. ["run-ci-megatron"]`},
		{name: "pr labels not strings", trig: Trigger{Event: "pull_request", PRLabelsJSON: `[1]`},
			wantErr: `PR labels were not a JSON string array: "[1]"; pass the label names, e.g. ["run-ci-megatron"]`},
		{name: "pr labels object", trig: Trigger{Event: "pull_request", PRLabelsJSON: `{"a":1}`},
			wantErr: `PR labels were not a JSON string array: "{\"a\":1}"; pass the label names, e.g. ["run-ci-megatron"]`},
		{name: "pr labels trailing data", trig: Trigger{Event: "pull_request", PRLabelsJSON: `[] []`},
			wantErr: `PR labels were not a JSON string array: "[] []"; pass the label names, e.g. ["run-ci-megatron"]`},
		{name: "nightly cron", trig: Trigger{Event: "schedule", Schedule: "0 15 * * 0-5"}, want: WorkflowPolicy{Cadence: Nightly, RawLabels: []string{}, BypassFastfail: true}},
		{name: "weekly cron", trig: Trigger{Event: "schedule", Schedule: "0 15 * * 6"}, want: WorkflowPolicy{Cadence: Weekly, RawLabels: []string{}, BypassFastfail: true}},
		{name: "unknown cron fails closed", trig: Trigger{Event: "schedule", Schedule: "0 15 * * *"},
			wantErr: "No CI policy is defined for schedule: 0 15 * * *; known crons are '0 15 * * 0-5' (nightly) and '0 15 * * 6' (weekly)"},
		{name: "dispatch", trig: Trigger{Event: "workflow_dispatch", PRLabelsJSON: `["run-ci-all"]`}, want: WorkflowPolicy{Cadence: Regular, RawLabels: []string{}}},
		{name: "unknown event", trig: Trigger{Event: "push"},
			wantErr: "Unsupported PR Test trigger: push; expected pull_request, schedule or workflow_dispatch (or a cadence override for a called workflow)"},
		{name: "called cadence wins", trig: Trigger{Event: "pull_request", PRLabelsJSON: `["nightly"]`, CadenceOverride: "release"},
			want: WorkflowPolicy{Cadence: Release, RawLabels: []string{}, BypassFastfail: true}},
		{name: "called cadence with any event", trig: Trigger{Event: "push", CadenceOverride: "regular"}, want: WorkflowPolicy{Cadence: Regular, RawLabels: []string{}}},
		{name: "bad called cadence", trig: Trigger{Event: "workflow_dispatch", CadenceOverride: "daily"},
			wantErr: "cadence override: Unknown CI cadence 'daily'; expected one of ['nightly', 'regular', 'release', 'weekly']"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveTrigger(tc.trig)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("wanted error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wanted %+v, got %+v", tc.want, got)
			}
		})
	}
}

// FuzzResolveTrigger feeds arbitrary event payloads (PR labels JSON, crons,
// cadence inputs) to the trigger resolver: it must answer or fail, never panic,
// and a pull request's raw labels must all be ones the workflow keeps.
func FuzzResolveTrigger(f *testing.F) {
	f.Add("pull_request", "", `["run-ci-megatron","nightly"]`, "")
	f.Add("schedule", "0 15 * * 6", "", "")
	f.Add("workflow_dispatch", "", "null", "weekly")
	f.Add("pull_request", "", `["\u0000", 1, {}]`, "")
	f.Fuzz(func(t *testing.T, event, schedule, labels, cadence string) {
		wp, err := ResolveTrigger(Trigger{Event: event, Schedule: schedule, PRLabelsJSON: labels, CadenceOverride: cadence})
		if err != nil {
			return
		}
		for _, l := range wp.RawLabels {
			if l != LabelNightly && l != LabelBypassFastfail && !safeRunCILabel.MatchString(l) {
				t.Fatalf("kept unsafe label %q", l)
			}
		}
		if _, err := ParseCadence(string(wp.Cadence)); err != nil {
			t.Fatalf("resolved to an unknown cadence %q", wp.Cadence)
		}
	})
}
