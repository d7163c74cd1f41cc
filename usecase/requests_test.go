package usecase

import (
	"testing"

	"github.com/radixark/miles-ci/policy"
)

func intp(n int) *int { return &n }

// TestPlanRequestValidate: plan's argument rules, one message each, for both front ends.
func TestPlanRequestValidate(t *testing.T) {
	one := policy.PlanRequest{HW: policy.CUDA, Suite: "stage-c-4-gpu-h200"}
	for _, tc := range []struct {
		name string
		req  PlanRequest
		want string
	}{
		{"one shard", PlanRequest{Request: one}, ""},
		{"all", PlanRequest{All: true}, ""},
		{"partitioned", PlanRequest{Request: one, PartitionID: intp(1), PartitionSize: intp(3)}, ""},
		{"github output with all", PlanRequest{All: true, HasTestsOutput: true}, "--github-output says whether one shard has tests; drop --all"},
		{"id alone", PlanRequest{Request: one, PartitionID: intp(0)}, "--auto-partition-id and --auto-partition-size must be specified together."},
		{"size alone", PlanRequest{Request: one, PartitionSize: intp(2)}, "--auto-partition-id and --auto-partition-size must be specified together."},
		{"all with hw", PlanRequest{All: true, Request: policy.PlanRequest{HW: policy.CPU}}, "--all plans every suite and shard; drop --hw, --suite and --auto-partition-*"},
		{"all with a partition", PlanRequest{All: true, PartitionID: intp(0), PartitionSize: intp(2)}, "--all plans every suite and shard; drop --hw, --suite and --auto-partition-*"},
		{"no suite", PlanRequest{Request: policy.PlanRequest{HW: policy.CPU}}, "--hw and --suite are required (or --all)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			if got := errText(req.Validate()); got != tc.want {
				t.Errorf("wanted %q, got %q", tc.want, got)
			}
			if tc.want == "" && req.Request.Cadence != policy.Regular {
				t.Errorf("wanted cadence regular by default, got %q", req.Request.Cadence)
			}
		})
	}
}

func TestPolicyRequestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   PolicyRequest
		front Frontend
		want  string
	}{
		{"event", PolicyRequest{Trigger: policy.Trigger{Event: policy.EventSchedule}}, CLI, ""},
		{"override", PolicyRequest{Trigger: policy.Trigger{CadenceOverride: "nightly"}}, Module, ""},
		{"pr", PolicyRequest{Given: Given{PR: true}}, Module, ""},
		{"cli", PolicyRequest{}, CLI, "--event is required (or set EVENT_NAME, or give --cadence-override or --pr N)"},
		{"module", PolicyRequest{}, Module, "--event is required (or give --cadence-override or with-pr --number N)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Frontend = tc.front
			if got := errText(tc.req.Validate()); got != tc.want {
				t.Errorf("wanted %q, got %q", tc.want, got)
			}
		})
	}
}

func TestImageRequestValidate(t *testing.T) {
	err := ImageRequest{Backend: policy.CUDA, CalledTag: "x", LockFile: "release-lock.json"}.Validate()
	if want := "--called-image-tag and --lockfile both name the called tag; give one"; errText(err) != want {
		t.Errorf("wanted %q, got %q", want, errText(err))
	}
}

// TestRoster: the built-in roster without a checkout; with OrBuiltIn, a
// folder that is not one gives it too, with a notice.
func TestRoster(t *testing.T) {
	builtIn := len(policy.Roster())
	roster, msgs, err := Roster(RosterRequest{})
	if err != nil || len(roster) != builtIn || msgs != nil {
		t.Errorf("wanted the built-in roster, got %d stages, %v, %v", len(roster), msgs, err)
	}
	roster, msgs, err = Roster(RosterRequest{Repo: t.TempDir(), Shown: "source", Given: Given{Repo: true}, OrBuiltIn: true})
	if err != nil || len(roster) != builtIn || len(msgs) != 1 || msgs[0].Level != "notice" {
		t.Errorf("wanted the built-in roster with a notice, got %d stages, %v, %v", len(roster), msgs, err)
	}
	if _, _, err := Roster(RosterRequest{Repo: t.TempDir(), Given: Given{Repo: true}}); err == nil {
		t.Error("wanted a folder that is not a checkout refused without OrBuiltIn")
	}
}
