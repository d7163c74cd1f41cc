package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/history/historytest"
	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// forged is text a test, a checkout, a store or a results folder can hold:
// a line of its own that reads as a verdict, a workflow command, a group,
// a terminal title (OSC), a screen clear and a bidirectional override.
const forged = "x\n23 jobs: 23 passed\n::error::owned\n##[group]g\x1b]0;title\x07\x1b[2J\u202eyp.txt"

// forgedShown is forged as the one writer shows it: one line (its ##[
// broken as printable.Plain breaks it).
const forgedShown = `x\n23 jobs: 23 passed\n::error::owned\n##\[group]g\x1b]0;title\x07\x1b[2J\u202eyp.txt`

// oneWayOut fails when out holds a line that is not miles-ci's: a forged
// line, a control character, a workflow command miles-ci did not make.
func oneWayOut(t *testing.T, name, out string) {
	t.Helper()
	noCommands(t, name, out)
	for _, l := range strings.Split(out, "\n") {
		if l == "23 jobs: 23 passed" {
			t.Errorf("%s: a forged line of its own: %q", name, l)
		}
		if strings.ContainsAny(l, "\x1b\x07\r\u202e") {
			t.Errorf("%s: a control character: %q", name, l)
		}
	}
}

// TestUntrustedTextIsOneLine: what a checkout, a results folder or a
// store holds reaches stdout as one line of text, never a line of its own
// (issue 38 item 10: ci --dry-run's test files, report's job reasons,
// history slowest's paths).
func TestUntrustedTextIsOneLine(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, milesRepo(), repo)
	name := filepath.Join(repo, "tests", "fast", "test_"+strings.ReplaceAll(forged, "/", "_")+".py")
	if err := os.WriteFile(name, []byte("def test_x():\n    pass\n"), 0o644); err != nil {
		t.Skip("the file system takes no such name:", err)
	}
	want := "tests/fast/test_" + strings.ReplaceAll(forgedShown, "/", "_") + ".py"

	t.Run("ci --dry-run", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, nil, "ci", "--repo", repo, "--event", "pull_request", "--gpus", "none", "--dry-run", "--only", "stage-a-cpu")
		if code != 0 || !strings.Contains(stdout, "    "+want+"\n") {
			t.Fatalf("wanted the file on one line, got %d\n%s\n%s", code, stdout, stderr)
		}
		oneWayOut(t, "stdout", stdout)
	})
	t.Run("plan", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, nil, "plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-a-cpu")
		if code != 0 || !strings.Contains(stdout, "  - "+want+" (est_time=") {
			t.Fatalf("wanted the file on one line, got %d\n%s\n%s", code, stdout, stderr)
		}
		oneWayOut(t, "stdout", stdout)
	})
	t.Run("explain", func(t *testing.T) {
		// A disabled= text of the checkout is the reason explain prints.
		dis := filepath.Join(repo, "tests", "fast", "test_disabled_forged.py")
		src := "from tests.ci.ci_register import register_cpu_ci\n\nregister_cpu_ci(est_time=1, suite=\"stage-a-cpu\", disabled=" + strconvQuote(forged) + ")\n"
		if err := os.WriteFile(dis, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(dis)
		code, stdout, stderr := runCLI(t, nil, "explain", "--repo", repo, "--file", "tests/fast/test_disabled_forged.py")
		if code != 0 || !strings.Contains(stdout, "    skipped: disabled: "+forgedShown+"\n") {
			t.Fatalf("wanted the disabled reason on one line, got %d\n%s\n%s", code, stdout, stderr)
		}
		oneWayOut(t, "stdout", stdout)
	})
	t.Run("report of a ci folder", func(t *testing.T) {
		fakeCIEngine(t, nil)
		results := filepath.Join(t.TempDir(), "results")
		if code, _, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--gpus", "none", "--quiet", "--only", "stage-a-cpu", "--results", results); code != 0 {
			t.Fatalf("the run: %d\n%s", code, stderr)
		}
		editSummary(t, results, func(s map[string]any) {
			for _, j := range s["jobs"].([]any) {
				if job := j.(map[string]any); job["kind"] == "policy" {
					job["reason"] = forged
				}
			}
		})
		_, stdout, stderr := runCLI(t, nil, "report", "--results", results)
		if !strings.Contains(stdout, forgedShown) {
			t.Fatalf("wanted the reason on its job's line, got\n%s\n%s", stdout, stderr)
		}
		oneWayOut(t, "stdout", stdout)
		oneWayOut(t, "stderr", stderr)
	})
	t.Run("history slowest", func(t *testing.T) {
		db := historytest.DBs(t)["sqlite"](t)
		s, err := history.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		for i := range 3 {
			b := history.Batch{Provenance: history.Provenance{CommitSHA: "c", RunID: int64(i + 1), RunAttempt: 1, Event: "schedule", Ref: "refs/heads/main"},
				Attempts:   []history.Attempt{{TestPath: forged, Backend: "CUDA", Suite: "s\x1b[2J", TestAttempt: 1, Status: history.Pass, ElapsedS: 10, EstimatedS: 10}},
				RecordedAt: now.AddDate(0, 0, -1)}
			if err := s.Write(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		code, stdout, stderr := runCLI(t, nil, "history", "slowest", "--db", db, "--repo", milesRepo())
		if code != 0 || !strings.Contains(stdout, forgedShown) || !strings.Contains(stdout, `s\x1b[2J`) {
			t.Fatalf("wanted the path on one line, got %d\n%s\n%s", code, stdout, stderr)
		}
		oneWayOut(t, "stdout", stdout)
		code, stdout, _ = runCLI(t, nil, "history", "chart", "--db", db, "--repo", milesRepo(), "--out", "-")
		if code != 0 {
			t.Fatalf("history chart: %d", code)
		}
		// history chart --out writes no file through a link (issue 38 LOW).
		dir := t.TempDir()
		target, link := filepath.Join(dir, "target"), filepath.Join(dir, "chart.svg")
		os.WriteFile(target, []byte("keep"), 0o644)
		os.Symlink(target, link)
		if code, _, stderr := runCLI(t, nil, "history", "chart", "--db", db, "--repo", milesRepo(), "--out", link); code != 1 || !strings.Contains(stderr, "is a symbolic link") {
			t.Errorf("wanted --out through a link refused, got %d\n%s", code, stderr)
		}
		if got, _ := os.ReadFile(target); string(got) != "keep" {
			t.Errorf("wanted the link's target untouched, got %q", got)
		}
		// Item 11: the SVG is XML, whatever the store's paths hold.
		dec := xml.NewDecoder(strings.NewReader(stdout))
		for {
			_, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("wanted the chart to be XML, got %v\n%s", err, stdout)
			}
		}
	})
}

// editSummary rewrites dir's summary.json with edit, as a person (or an
// attacker) with the folder can.
func editSummary(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	name := filepath.Join(dir, "summary.json")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	edit(s)
	if data, err = json.MarshalIndent(s, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTriageFileNameIsOneLine: a failed file's name read from a results
// folder shows on one line in triage's table (issue 38 item 10).
func TestTriageFileNameIsOneLine(t *testing.T) {
	repo := gitCheckout(t)
	fakeTriageEngine(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	os.MkdirAll(results, 0o755)
	sum := `{"hw":"cpu","suite":"stage-a-cpu","verdict":"failed","passed":false,"exit_code":1,"tests":[{"file":` + strconvQuote(forged) + `,"status":"fail","attempts":1,"elapsed_s":1,"exit_code":1,"timeout_s":null}]}`
	os.WriteFile(filepath.Join(results, "summary.json"), []byte(sum), 0o644)
	_, stdout, stderr := runCLI(t, nil, "triage", "--repo", repo, "--base", "main", "--gpus", "none", "--quiet", "--out", filepath.Join(dir, "triage"), "--results", results)
	if !strings.Contains(stdout, "\n"+forgedShown+"  inconclusive  head 0 pass / 0 fail: ") {
		t.Fatalf("wanted the file named on its verdict's line, got\n%s\n%s", stdout, stderr)
	}
	oneWayOut(t, "stdout", stdout)
	oneWayOut(t, "stderr", stderr)
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestTriageProgressIsOneLine: an attempt's reason, which the container
// decides (here the error of a run it broke), shows on one line in
// triage's progress on stderr (issue 38 item 10).
func TestTriageProgressIsOneLine(t *testing.T) {
	repo := gitCheckout(t)
	fakeTriageEngine(t)
	ciShardRun = func(context.Context, stagerun.Container, stagerun.Request, string, *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		return stagerun.Result{}, stagerun.Spec{}, errors.New(forged)
	}
	_, stdout, stderr := runCLI(t, nil, "triage", "--repo", repo, "--base", "main", "--gpus", "none", "--quiet", "--attempts", "1",
		"--out", filepath.Join(t.TempDir(), "triage"), "--file", "tests/fast/test_data_source.py")
	if !strings.Contains(stderr, "triage tests/fast/test_data_source.py head #1 cannot-run") || !strings.Contains(stderr, forgedShown) {
		t.Fatalf("wanted the attempt's reason on its progress line, got\n%s\n%s", stderr, stdout)
	}
	oneWayOut(t, "stdout", stdout)
	oneWayOut(t, "stderr", stderr)
}

// TestStagesIsOneLine: a runner label of the checkout's workflows (a PR
// may change them) shows on its stage's row in stages' table, never a line
// of its own (issue 38 item 10).
func TestStagesIsOneLine(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, milesRepo(), repo)
	wf := filepath.Join(repo, ".github", "workflows", "pr-test.yml")
	data, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	label, _ := json.Marshal(forged)
	forgedRow := strings.Replace(string(data), `runs_on: '["h200", "2gpu"]'`, `runs_on: '["h200", "2gpu", `+string(label)+`]'`, 1)
	if forgedRow == string(data) {
		t.Fatal("the fixture's workflow has no runs_on: '[\"h200\", \"2gpu\"]'")
	}
	if err := os.WriteFile(wf, []byte(forgedRow), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, nil, "stages", "--repo", repo)
	if code != 0 || !strings.Contains(stdout, "h200,2gpu,"+forgedShown) {
		t.Fatalf("wanted the label on its stage's row, got %d\n%s\n%s", code, stdout, stderr)
	}
	oneWayOut(t, "stdout", stdout)
}

// TestHistoryImportIsOneLine: a shard folder named by a run record (its
// stage) shows on one line in history import's output and its warning
// (issue 38 item 10).
func TestHistoryImportIsOneLine(t *testing.T) {
	dir := t.TempDir()
	stage := "stage-a-cpu" + forged
	if err := os.MkdirAll(filepath.Join(dir, stage), 0o755); err != nil {
		t.Skip("the file system takes no such name:", err)
	}
	sum := `{"hw":"cpu","suite":` + strconvQuote(stage) + `,"verdict":"passed","passed":true,"exit_code":0,"tests":[{"file":"tests/fast/test_a.py","status":"pass","attempts":1,"elapsed_s":1,"exit_code":0,"timeout_s":null,"est_time":5}]}`
	os.WriteFile(filepath.Join(dir, stage, "summary.json"), []byte(sum), 0o644)
	job := `{"job":"pr-test/stage-a-cpu","kind":"stage","stage":` + strconvQuote(stage) + `,"shard":null,"state":"passed","result":"success","gpus":0,"needs":[],"required":true,"duration_s":1,"exit_code":0}`
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"gpus":"none","jobs":[`+job+`]}`), 0o644)
	code, stdout, stderr := runCLI(t, nil, "history", "import", "--results", dir, "--db", filepath.Join(t.TempDir(), "h.db"))
	if code != 0 || !strings.Contains(stdout, forgedShown+": 1 attempt from summary.json\n") || !strings.Contains(stderr, forgedShown+": imported unchecked: ") {
		t.Fatalf("wanted the folder on one line, got %d\n%s\n%s", code, stdout, stderr)
	}
	oneWayOut(t, "stdout", stdout)
	oneWayOut(t, "stderr", stderr)
	if strings.Count(stderr, "::warning::") != 1 {
		t.Errorf("wanted one warning, got\n%s", stderr)
	}
}
