package usecase

import (
	"reflect"
	"testing"
)

// TestPlanStageIsStage holds the module's chain (PlanStage once, then a
// shard of it) to the CLI's run (Stage with the shard): the same request for
// every shard, after the plan's round trip through its field.
func TestPlanStageIsStage(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Inputs
	}{
		{"stage-a-cpu", Inputs{Labels: []string{"run-ci-megatron"}}},
		{"stage-b-cpu", Inputs{Cadence: "nightly"}},
		{"stage-c-4-gpu-h200", Inputs{Labels: []string{"run-ci-megatron"}, MatchAllLabels: true}},
		{"stage-c-4-gpu-mi350", Inputs{}},
		{"stage-c-8-gpu-h200", Inputs{PR: fetch(t, 2874, true)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Repo, in.Stage = milesRepo, tc.name
			before := Plannings()
			p, err := PlanStage(in)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := p.Encode()
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeStagePlan(enc)
			if err != nil {
				t.Fatal(err)
			}
			for id := range back.Shards {
				got, err := back.Shard(id + 1)
				if err != nil {
					t.Fatal(err)
				}
				if n := Plannings() - before; n != 1 {
					t.Errorf("wanted 1 planning for the stage and its shard %d, got %d", id, n)
				}
				one := in
				if p.Count > 1 {
					n := id + 1
					one.Shard = &n
				}
				want, err := Stage(one)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("shard %d: wanted %+v, got %+v", id, want, got)
				}
				before++
			}
		})
	}
}

// TestPlanFileRoundTrip: the file run's request read back is the one built.
func TestPlanFileRoundTrip(t *testing.T) {
	for _, file := range []string{"tests/e2e/megatron/test_glm4_9b.py", "tests/fast/test_chunked_gae.py"} {
		t.Run(file, func(t *testing.T) {
			want, enc, err := PlanFile(Inputs{Repo: milesRepo, File: file})
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeRequest(enc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("wanted %+v, got %+v", want, got)
			}
		})
	}
}

// TestStagePlanShardErrors: a shard the plan has not is refused as Stage refuses it.
func TestStagePlanShardErrors(t *testing.T) {
	for _, tc := range []struct {
		stage string
		id    int
		want  string
	}{
		{"stage-a-cpu", 5, "stage stage-a-cpu has shards 1 to 4, as every output numbers them (shard 1/4 to 4/4); 5 is not one of them"},
		{"stage-a-cpu", 0, "stage stage-a-cpu has shards 1 to 4, as every output numbers them (shard 1/4 to 4/4); 0 is not one of them"},
		{"stage-b-cpu", 0, "stage stage-b-cpu is not sharded; give shard 1 or none"},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			p, err := PlanStage(Inputs{Repo: "../testdata/miles", Stage: tc.stage})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Shard(tc.id)
			if err == nil || err.Error() != tc.want {
				t.Errorf("wanted %q, got %v", tc.want, err)
			}
		})
	}
}

func TestCheckTimeoutMinutes(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, ""}, {1, ""}, {MaxTimeoutMinutes, ""},
		{-1, "--timeout-minutes must be in 1..7200, got -1"},
		{MaxTimeoutMinutes + 1, "--timeout-minutes must be in 1..7200, got 7201"},
	} {
		err := CheckTimeoutMinutes(tc.n)
		if got := errText(err); got != tc.want {
			t.Errorf("%d: wanted %q, got %q", tc.n, tc.want, got)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
