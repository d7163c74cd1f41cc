package usecase

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPoolBatch: run --stage stage-c-b200 --batch N is each file of the
// batch as a single-file run, with its own GPU count (the first N devices),
// on testdata/miles-b200pool.
func TestPoolBatch(t *testing.T) {
	root := filepath.Join("..", "testdata", "miles-b200pool")
	reqs, b, err := PoolBatch(Inputs{Repo: root, Stage: "stage-c-b200", Labels: []string{"run-ci-short", "run-ci-megatron", "run-on-blackwell"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, r := range reqs {
		if r.File == nil {
			t.Fatalf("job %d: wanted a single-file run, got %+v", i, r)
		}
		got = append(got, r.File.File+" "+r.GPUs.String()+" "+strings.Join(r.Stage.RunsOn, "+"))
		if b.Jobs[i].File != r.File.File {
			t.Errorf("job %d: wanted %s, got %s", i, b.Jobs[i].File, r.File.File)
		}
	}
	want := []string{
		"tests/e2e/megatron/test_b200_eight.py 0,1,2,3,4,5,6,7 b200+8gpu",
		"tests/e2e/megatron/test_portable_eight.py 0,1,2,3,4,5,6,7 b200+8gpu",
		"tests/e2e/megatron/test_portable_four.py 0,1 b200+2gpu",
		"tests/e2e/short/test_b200_two.py 0,1 b200+2gpu",
		"tests/e2e/short/test_b200_one.py 0 b200+1gpu",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wanted\n%s\ngot\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	// --gpus none (an engine without GPUs) is kept for every file.
	reqs, _, err = PoolBatch(Inputs{Repo: root, Stage: "stage-c-4-gpu-b200", Labels: []string{"run-ci-short"}, GPUs: "none"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || !reqs[0].GPUs.None || !reqs[1].GPUs.None {
		t.Errorf("wanted two runs without GPUs, got %d", len(reqs))
	}
	for _, tc := range []struct {
		name string
		in   Inputs
		n    int
		want string
	}{
		{"no such batch", Inputs{Repo: root, Stage: "stage-c-b200", Labels: []string{"run-ci-short"}}, 2, "batch 2 is not in the pool plan, which has 1 batch(es); give --batch 1 to 1"},
		{"not a pool job", Inputs{Repo: root, Stage: "stage-c-8-gpu-h200"}, 1, "stage stage-c-8-gpu-h200 is not a B200 pool job; the pool's are stage-c-4-gpu-b200, stage-c-8-gpu-b200 and its job"},
		{"no pool", Inputs{Repo: filepath.Join("..", "testdata", "miles-gpugen"), Stage: "stage-c-8-gpu-b200"}, 1, "--batch runs a batch of the B200 pool, and this checkout has none (its rule set is gpu-generation); drop --batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := PoolBatch(tc.in, tc.n); err == nil || err.Error() != tc.want {
				t.Errorf("wanted %q, got %v", tc.want, err)
			}
		})
	}
}

// TestLookupPoolStage: a pool suite is run by batches, and says so.
func TestLookupPoolStage(t *testing.T) {
	_, err := Stage(Inputs{Repo: filepath.Join("..", "testdata", "miles-b200pool"), Stage: "stage-c-8-gpu-b200"})
	want := "stage stage-c-8-gpu-b200 is planned with the B200 pool, one job per file (job stage-c-b200, rules §11.8): run --stage stage-c-b200 --batch N, the batches of miles-ci plan --pool"
	if err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}
