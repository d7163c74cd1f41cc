package usecase

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// shardSummary is a shard's summary.json as a run writes it.
func shardSummary(t *testing.T, suite string, shard *policy.Partition, file string, passed bool) []byte {
	t.Helper()
	s := report.Summary{HW: policy.CPU, Suite: suite, Shard: shard, File: file, Verdict: report.Passed, Passed: true,
		Tests: []report.TestResult{{File: "tests/fast/test_" + suite + ".py", Status: report.Pass, Attempts: 1}}}
	if !passed {
		s.Verdict, s.Passed, s.ExitCode, s.Tests[0].Status = report.Failed, false, 1, report.Fail
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeCIFolder writes a ci run's folder: the record and each shard's
// folder (dir: its summary.json), bound by digest.
func writeCIFolder(t *testing.T, jobs []cirun.JobReport, folders map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for i, j := range jobs {
		if data, ok := folders[j.Unit()]; ok {
			p := filepath.Join(dir, filepath.FromSlash(j.ResultsDir()))
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "summary.json"), data, 0o644)
			sum := sha256.Sum256(data)
			jobs[i].SummarySHA256, jobs[i].Results = hex.EncodeToString(sum[:]), j.ResultsDir()
		}
	}
	data, err := json.Marshal(cirun.Report{Jobs: jobs, Run: &cirun.RunFacts{Commit: "c", Event: "pull_request", Planner: "miles-ci"}})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644)
	return dir
}

// TestReadResultsFolderLayouts: the one reader finds each layout's shards
// where the command that wrote it put them (issue 40 item 1).
func TestReadResultsFolderLayouts(t *testing.T) {
	jobs := []cirun.JobReport{
		{Key: "pr-test/policy", Kind: cirun.KindPolicy, State: cirun.Passed},
		{Key: "pr-test/stage-a-cpu", Kind: cirun.KindStage, Stage: "stage-a-cpu", Shard: intp(0), Shards: 2, State: cirun.Passed},
		{Key: "pr-test/stage-a-cpu", Kind: cirun.KindStage, Stage: "stage-a-cpu", Shard: intp(1), Shards: 2, State: cirun.Failed},
		{Key: "pr-test/stage-b-cpu", Kind: cirun.KindStage, Stage: "stage-b-cpu", Shard: intp(0), Shards: 1, State: cirun.Passed},
		{Key: "stage-c-b200/test", Kind: cirun.KindPoolRun, Stage: "stage-c-8-gpu-b200", Shard: intp(0), Batch: 1, File: "tests/e2e/test_b.py", State: cirun.Passed},
		{Key: "pr-test/stage-c-2-gpu-h200", Kind: cirun.KindStage, Stage: "stage-c-2-gpu-h200", Shard: intp(0), Shards: 2, State: cirun.Skipped},
	}
	dir := writeCIFolder(t, jobs, map[string][]byte{
		jobs[1].Unit(): shardSummary(t, "stage-a-cpu", &policy.Partition{ID: 0, Size: 2}, "", true),
		jobs[2].Unit(): shardSummary(t, "stage-a-cpu", &policy.Partition{ID: 1, Size: 2}, "", false),
		jobs[3].Unit(): shardSummary(t, "stage-b-cpu", nil, "", true),
		jobs[4].Unit(): shardSummary(t, "stage-c-8-gpu-b200", nil, "tests/e2e/test_b.py", true),
	})
	f, err := ReadResultsFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, s := range f.Shards {
		if s.Unproven != "" || s.Summary == nil {
			t.Errorf("%s: wanted it proven, got %q", s.Dir, s.Unproven)
		}
		dirs = append(dirs, s.Dir)
	}
	if want := []string{"stage-a-cpu/1-of-2", "stage-a-cpu/2-of-2", "stage-b-cpu", "stage-c-8-gpu-b200/0"}; f.Layout != LayoutCI || !slices.Equal(dirs, want) {
		t.Errorf("wanted the ci layout's folders %v, got %s %v", want, f.Layout, dirs)
	}
	if got := f.FailedFiles(); !slices.Equal(got, []string{"tests/fast/test_stage-a-cpu.py"}) {
		t.Errorf("wanted the failed shard's file, got %v", got)
	}

	// A failed shard set to passed in the record only (issue 38 item 2):
	// its own summary still says failed, so triage --results still finds
	// its file.
	edited := slices.Clone(jobs)
	edited[2].State = cirun.Passed
	dir = writeCIFolder(t, edited, map[string][]byte{
		edited[1].Unit(): shardSummary(t, "stage-a-cpu", &policy.Partition{ID: 0, Size: 2}, "", true),
		edited[2].Unit(): shardSummary(t, "stage-a-cpu", &policy.Partition{ID: 1, Size: 2}, "", false),
	})
	// A stage the record names with a line break: each shard not proven is
	// still one line (a re-run's warning, report's text).
	forged := jobs[1]
	forged.Stage += "\n23 jobs: 23 passed"
	_, err = ReadResultsFolder(writeCIFolder(t, []cirun.JobReport{jobs[0], forged}, map[string][]byte{}))
	if err == nil {
		t.Fatal("wanted a folder without shard records refused")
	}
	f, err = ReadResultsFolder(writeCIFolder(t, []cirun.JobReport{jobs[0], forged, jobs[3]}, map[string][]byte{jobs[3].Unit(): shardSummary(t, "stage-b-cpu", nil, "", true)}))
	if err != nil || len(f.UnprovenLines()) != 1 || !strings.Contains(f.UnprovenLines()[0], `stage-a-cpu\n23 jobs: 23 passed`) || strings.Contains(f.UnprovenLines()[0], "\n") {
		t.Errorf("wanted one line naming the forged shard, got %q %v", f.UnprovenLines(), err)
	}

	f, err = ReadResultsFolder(dir)
	if err != nil || !slices.Equal(f.FailedFiles(), []string{"tests/fast/test_stage-a-cpu.py"}) ||
		!slices.ContainsFunc(f.Unproven(), func(s ShardRecord) bool { return s.Dir == "stage-a-cpu/2-of-2" }) {
		t.Errorf("wanted the edited shard's failed file and it unproven, got %v %v", f.FailedFiles(), err)
	}

	// An older run kept a shard as STAGE/ID: found, and (no digest) not proven.
	old := t.TempDir()
	os.MkdirAll(filepath.Join(old, "stage-a-cpu", "1"), 0o755)
	os.WriteFile(filepath.Join(old, "stage-a-cpu", "1", "summary.json"), shardSummary(t, "stage-a-cpu", &policy.Partition{ID: 1, Size: 2}, "", false), 0o644)
	older := jobs[2]
	older.SummarySHA256, older.Results = "", ""
	data, _ := json.Marshal(cirun.Report{Jobs: []cirun.JobReport{older}})
	os.WriteFile(filepath.Join(old, "summary.json"), data, 0o644)
	if f, err := ReadResultsFolder(old); err != nil || len(f.Shards) != 1 || f.Shards[0].Dir != "stage-a-cpu/1" || f.Shards[0].Summary == nil ||
		!strings.Contains(f.Shards[0].Unproven, "no digest") {
		t.Errorf("wanted the older folder found, got %+v %v", f, err)
	}

	// run and file-run: one summary at the top.
	run := t.TempDir()
	os.WriteFile(filepath.Join(run, "summary.json"), shardSummary(t, "stage-b-cpu", nil, "", false), 0o644)
	if f, err := ReadResultsFolder(run); err != nil || f.Layout != LayoutRun || len(f.FailedFiles()) != 1 {
		t.Errorf("wanted a run's folder, got %+v %v", f, err)
	}

	// triage: its attempts' folders, the head's failures.
	tri := t.TempDir()
	os.WriteFile(filepath.Join(tri, "triage.json"), []byte("{}"), 0o644)
	for _, a := range []struct {
		dir    string
		passed bool
	}{{"tests__fast__test_x/head-1", false}, {"tests__fast__test_x/base-1", true}, {"tests__fast__test_x/other", false}} {
		os.MkdirAll(filepath.Join(tri, a.dir), 0o755)
		os.WriteFile(filepath.Join(tri, a.dir, "summary.json"), shardSummary(t, "stage-a-cpu", nil, "", a.passed), 0o644)
	}
	if f, err := ReadResultsFolder(tri); err != nil || f.Layout != LayoutTriage || len(f.Shards) != 2 || len(f.FailedFiles()) != 1 {
		t.Errorf("wanted a triage's two attempts, got %+v %v", f, err)
	}

	for _, bad := range []struct{ name, dir, want string }{
		{"missing", filepath.Join(t.TempDir(), "nope"), "does not exist"},
		{"empty", t.TempDir(), "holds neither summary.json"},
	} {
		if _, err := ReadResultsFolder(bad.dir); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: wanted %q, got %v", bad.name, bad.want, err)
		}
	}
	// The record of a run whose shards are all gone is refused.
	os.RemoveAll(filepath.Join(dir, "stage-a-cpu"))
	os.RemoveAll(filepath.Join(dir, "stage-b-cpu"))
	os.RemoveAll(filepath.Join(dir, "stage-c-8-gpu-b200"))
	if _, err := ReadResultsFolder(dir); !errors.Is(err, ErrNotResults) {
		t.Errorf("wanted a folder without shard records refused, got %v", err)
	}
}
