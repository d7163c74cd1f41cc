package runhistory

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/history/historytest"
	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/usecase"
)

// copyTree copies the folder src to a new temporary folder.
func copyTree(t *testing.T, src string) string {
	dst := t.TempDir()
	testfiles.CopyTree(t, src, dst)
	return dst
}

// rowsDirs are the fixture's kept batches (testdata/esttime/rows).
func rowsDirs(t *testing.T) []string {
	dirs, err := filepath.Glob("testdata/esttime/rows/run-*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixture rows: %v", err)
	}
	return dirs
}

// TestEstTimeMatchesMiles: the fixture's attempts, imported into each back
// end, give the files and the report Miles' update_est_time.py (branch
// jiajun/ci-runtime-est-time) gave on the same rows in Postgres and the
// same test files (testdata/esttime/want): the keyword and positional
// literals (CRLF, a wide character, parentheses), a disabled registration
// sharing the identity, a decrease, fewer than 3 samples, an estimate
// already current, 200 and 201 s, 17 samples tied on recorded_at, a
// pull_request, release, local and out-of-window row, ROCm and a CUDA file
// outside tests/e2e.
func TestEstTimeMatchesMiles(t *testing.T) {
	want, err := os.ReadFile("testdata/esttime/want/report.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, newDB := range historytest.DBs(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			if _, err := Import(context.Background(), ImportRequest{DB: db, Results: rowsDirs(t), Getenv: os.Getenv}); err != nil {
				t.Fatal(err)
			}
			tree := copyTree(t, "testdata/esttime/tree")
			req := EstTimeRequest{Repo: tree, DB: db, AsOf: time.Date(2026, 8, 12, 0, 0, 0, 0, time.UTC), DryRun: true}
			dry, err := EstTime(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if dry.Report != string(want) {
				t.Errorf("wanted Miles' report\n%s\ngot\n%s", want, dry.Report)
			}
			sameTree(t, "testdata/esttime/tree", tree) // a dry run writes nothing
			req.DryRun = false
			res, err := EstTime(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Report != string(want) || len(res.Files) != 6 {
				t.Errorf("wanted the same report and 6 files, got %d files %v", len(res.Files), res.Files)
			}
			sameTree(t, "testdata/esttime/want/tests", filepath.Join(tree, "tests"))
			// Calibrating the calibrated tree changes nothing.
			again, err := EstTime(context.Background(), req)
			if err != nil || len(again.Changes) != 0 || !strings.HasSuffix(again.Report, "No `est_time` changes were needed.\n") {
				t.Errorf("wanted no change the second time, got %+v, %v", again.Changes, err)
			}
		})
	}
}

// sameTree compares every file below want with the one below got.
func sameTree(t *testing.T, want, got string) {
	t.Helper()
	filepath.WalkDir(want, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, path)
		w, _ := os.ReadFile(path)
		g, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil || string(w) != string(g) {
			t.Errorf("%s: wanted %q, got %q (%v)", rel, w, g, err)
		}
		return nil
	})
}

func TestEstTimeExtensions(t *testing.T) {
	db := historytest.DBs(t)["sqlite"](t)
	if _, err := Import(context.Background(), ImportRequest{DB: db, Results: rowsDirs(t), Getenv: os.Getenv}); err != nil {
		t.Fatal(err)
	}
	tree := copyTree(t, "testdata/esttime/tree")
	res, err := EstTime(context.Background(), EstTimeRequest{Repo: tree, DB: db, AsOf: time.Date(2026, 8, 12, 0, 0, 0, 0, time.UTC), DryRun: true,
		Backends: []policy.Backend{policy.CUDA, policy.ROCM}, Events: []string{"schedule", "local"}})
	if err != nil {
		t.Fatal(err)
	}
	var rocm, few bool
	for _, c := range res.Changes {
		rocm = rocm || (c.Backend == "ROCM" && c.New == 400)
		few = few || (c.TestPath == "tests/e2e/b/test_few.py" && c.Samples == 3)
	}
	if !rocm || !few {
		t.Errorf("wanted the ROCm registration at 400 and test_few with its local sample, got %+v", res.Changes)
	}
}

func TestRecordAndReplay(t *testing.T) {
	ctx := context.Background()
	for name, newDB := range historytest.DBs(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			results := t.TempDir()
			s := report.Summary{HW: "cuda", Suite: "stage-c-8-gpu-h100", Verdict: report.Failed, Tests: []report.TestResult{
				{File: "tests/e2e/a.py", Status: report.Pass, Attempts: 2, EstTime: 60, Tries: []report.Try{{Status: report.Fail, ElapsedS: 5}, {Status: report.Pass, ElapsedS: 7}}},
				{File: "tests/e2e/b.py", Status: report.Timeout, Attempts: 1, EstTime: 60, Tries: []report.Try{{Status: report.Timeout, ElapsedS: 75}}},
			}}
			p := history.Provenance{CommitSHA: "abc", RunID: 42, RunAttempt: 1, Event: "schedule", Ref: "refs/heads/main"}
			at := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
			count := func() int {
				st, err := history.Open(ctx, db)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				rows, err := st.Rows(ctx, time.Time{}, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				return len(rows)
			}
			req := RecordRequest{DB: db, Summary: s, Provenance: p, At: at}
			if err := Record(ctx, req).Err; err != nil {
				t.Fatal(err)
			}
			if n := count(); n != 3 {
				t.Fatalf("wanted 3 attempts, got %d", n)
			}
			req.At = at.Add(time.Hour) // the same run recorded again, later
			if err := Record(ctx, req).Err; err != nil || count() != 3 {
				t.Fatalf("wanted a replay to write nothing, got %v and %d rows", err, count())
			}
			// The same run id with another outcome is refused, whole.
			req.Summary.Tests = append([]report.TestResult{}, s.Tests...)
			req.Summary.Tests[1] = report.TestResult{File: "tests/e2e/b.py", Status: report.Pass, Attempts: 1, EstTime: 60, Tries: []report.Try{{Status: report.Pass, ElapsedS: 70}}}
			req.Summary.Tests = append(req.Summary.Tests, report.TestResult{File: "tests/e2e/c.py", Status: report.Pass, Attempts: 1, EstTime: 60, ElapsedS: 3})
			var ce *history.ConflictError
			rec := Record(ctx, req)
			if !errors.As(rec.Err, &ce) || count() != 3 {
				t.Fatalf("wanted a conflict and nothing written, got %v and %d rows", rec.Err, count())
			}
			// The rows, kept in the results folder, import later, as the
			// same run: nothing new.
			if f := rec.File(); f.Name != history.RowsFile || os.WriteFile(filepath.Join(results, f.Name), []byte(f.Data), 0o644) != nil {
				t.Fatalf("wanted the rows as %s, got %s", history.RowsFile, f.Name)
			}
			if _, err := Import(ctx, ImportRequest{DB: db, Results: []string{results}, Getenv: os.Getenv}); !errors.As(err, &ce) {
				t.Errorf("wanted the kept conflicting rows refused, got %v", err)
			}
		})
	}
}

// TestHistoryEventTypos: a mistyped --events name is a usage error naming
// the nearest event, in est-time and history shards alike.
func TestHistoryEventTypos(t *testing.T) {
	for _, err := range []error{
		EstTimeRequest{DB: "x", AsOf: time.Now(), Events: []string{"schedule", "lcoal"}}.Validate(),
		ShardsRequest{Stage: "s", DB: "x", AsOf: time.Now(), Events: []string{"lcoal"}}.Validate(),
	} {
		var unknown *usecase.UnknownError
		if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "did you mean local?") {
			t.Errorf("wanted an UnknownError naming local, got %v", err)
		}
	}
}

// TestEstTimeNeverWritesAnOverflow: issue 31's est_time=-2^63. Rows of
// 1e308 seconds are refused where they enter (history import); written
// past miles-ci (and NaN, Infinity, which Postgres' CHECK lets through),
// they are skipped with a warning and the checkout is left as it was.
func TestEstTimeNeverWritesAnOverflow(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)
	for name, newDB := range historytest.DBs(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			// 1e308, and 3,000,000 s (34.7 days: more than one job runs, issue 38).
			for _, seconds := range []string{"1e308", "3000000"} {
				dir := t.TempDir()
				rows := `{"commit_sha":"c1","github_run_id":1,"github_run_attempt":1,"event_name":"schedule","git_ref":"refs/heads/main","recorded_at":"2026-08-10T12:00:00Z","attempts":[`
				for i := 1; i <= 3; i++ {
					if i > 1 {
						rows += ","
					}
					rows += fmt.Sprintf(`{"test_path":"tests/e2e/a/test_keyword.py","backend":"CUDA","suite":"stage-c-8-gpu-h100","test_attempt":%d,"status":"PASS","elapsed_seconds":%s,"estimated_seconds":60}`, i, seconds)
				}
				os.WriteFile(filepath.Join(dir, history.RowsFile), []byte(rows+"]}"), 0o644)
				if _, err := Import(ctx, ImportRequest{DB: db, Results: []string{dir}, Getenv: os.Getenv}); err == nil || !strings.Contains(err.Error(), "more than 432000") {
					t.Errorf("wanted the import of %s seconds refused, got %v", seconds, err)
				}
			}
			bad := []float64{1e308, math.Inf(1), 1e308}
			if name == "postgres" {
				bad = append(bad, math.NaN(), math.NaN())
			}
			for i, e := range bad {
				historytest.InsertRaw(t, db, "tests/e2e/a/test_keyword.py", e, int64(10+i), at)
			}
			tree := copyTree(t, "testdata/esttime/tree")
			var warned []string
			res, err := EstTime(ctx, EstTimeRequest{Repo: tree, DB: db, AsOf: at.AddDate(0, 0, 1), Warn: func(w string) { warned = append(warned, w) }})
			if err != nil || len(res.Changes) != 0 {
				t.Fatalf("wanted no change, got %+v, %v", res.Changes, err)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], fmt.Sprintf("%d PASS row(s) in the window", len(bad))) {
				t.Errorf("wanted the skipped rows named, got %q", warned)
			}
			sameTree(t, "testdata/esttime/tree", tree)
		})
	}
}

// TestEstTimeRefusesFilesOutsideTheCheckout: a test file that is a symlink
// out of the checkout is refused before anything is written (issue 31: its
// target was rewritten); one to a file inside is written through, the link
// kept.
func TestEstTimeRefusesFilesOutsideTheCheckout(t *testing.T) {
	ctx := context.Background()
	db := historytest.DBs(t)["sqlite"](t)
	if _, err := Import(ctx, ImportRequest{DB: db, Results: rowsDirs(t), Getenv: os.Getenv}); err != nil {
		t.Fatal(err)
	}
	tree := copyTree(t, "testdata/esttime/tree")
	link := filepath.Join(tree, "tests", "e2e", "a", "test_keyword.py")
	outside := filepath.Join(t.TempDir(), "test_keyword.py")
	orig, _ := os.ReadFile(link)
	os.WriteFile(outside, orig, 0o644)
	os.Remove(link)
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	req := EstTimeRequest{Repo: tree, DB: db, AsOf: time.Date(2026, 8, 12, 0, 0, 0, 0, time.UTC)}
	_, err := EstTime(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "tests/e2e/a/test_keyword.py leads through a symlink to "+outside+", outside the checkout") {
		t.Errorf("wanted the link out of the checkout refused, got %v", err)
	}
	if got, _ := os.ReadFile(outside); string(got) != string(orig) {
		t.Errorf("wanted the file outside the checkout untouched, got\n%s", got)
	}
	os.Remove(link)
	if err := os.Rename(outside, filepath.Join(tree, "tests", "e2e", "a", "real.py")); err != nil {
		t.Fatal(err)
	}
	os.Symlink("real.py", link)
	if _, err := EstTime(ctx, req); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("wanted the link inside the checkout kept, got %v %v", info, err)
	}
	want, _ := os.ReadFile("testdata/esttime/want/tests/e2e/a/test_keyword.py")
	if got, _ := os.ReadFile(filepath.Join(tree, "tests", "e2e", "a", "real.py")); string(got) != string(want) {
		t.Errorf("wanted the file the link names rewritten, got\n%s", got)
	}
}

// TestLockedStoreCostsOneWait: a store that fails (here a SQLite file
// another process holds locked) ends the recording at its first failure:
// the shards after keep their rows untried, so a locked file costs one
// wait, not one per shard (issue 31: 10 s per shard).
func TestLockedStoreCostsOneWait(t *testing.T) {
	db := historytest.DBs(t)["sqlite"](t)
	historytest.LockTable(t, db)
	shards := map[string]report.Summary{}
	results := t.TempDir()
	for i := range 5 {
		dir := fmt.Sprintf("stage-a-cpu/%d", i)
		os.MkdirAll(filepath.Join(results, dir), 0o755)
		shards[dir] = report.Summary{HW: "cpu", Suite: "stage-a-cpu", Verdict: report.Passed, Passed: true, Tests: []report.TestResult{
			{File: fmt.Sprintf("tests/a%d.py", i), Status: report.Pass, Attempts: 1, EstTime: 60, ElapsedS: 5}}}
	}
	start := time.Now()
	got := RecordShards(context.Background(), ShardsRecordRequest{DB: db, Shards: shards, At: time.Now(), Timeout: 2 * time.Second,
		Provenance: history.Provenance{CommitSHA: "c", RunID: 1, RunAttempt: 1, Event: "local", Ref: "local"}})
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("wanted one wait at most, it took %s", d)
	}
	for _, sh := range got {
		if f := sh.File(); sh.Err == nil || f.Name != sh.Dir+"/"+history.RowsFile || f.Data == "" {
			t.Errorf("%s: wanted the failure and the rows to keep, got %v, %s", sh.Dir, sh.Err, f.Name)
		}
	}
}

// TestImportACIFolder: history import of a ci run's folder imports each of
// its shards' rows, found by the one reader of results folders.
func TestImportACIFolder(t *testing.T) {
	dir := t.TempDir()
	rows := func(run int) string {
		return fmt.Sprintf(`{"commit_sha":"c1","github_run_id":%d,"github_run_attempt":1,"event_name":"local","git_ref":"local","recorded_at":"2026-08-10T12:00:00Z","attempts":[{"test_path":"tests/fast/test_a.py","backend":"CPU","suite":"stage-a-cpu","test_attempt":1,"status":"PASS","elapsed_seconds":3,"estimated_seconds":5}]}`, run)
	}
	var jobs []string
	for i, d := range []string{"stage-a-cpu/1-of-2", "stage-a-cpu/2-of-2"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
		sum := fmt.Sprintf(`{"hw":"cpu","suite":"stage-a-cpu","shard":{"id":%d,"size":2},"verdict":"passed","passed":true,"exit_code":0,"tests":[]}`, i)
		os.WriteFile(filepath.Join(dir, d, "summary.json"), []byte(sum), 0o644)
		os.WriteFile(filepath.Join(dir, d, history.RowsFile), []byte(rows(i+1)), 0o644)
		jobs = append(jobs, fmt.Sprintf(`{"job":"pr-test/stage-a-cpu","kind":"stage","stage":"stage-a-cpu","shard":%d,"shards":2,"state":"passed","result":"success","gpus":0,"needs":[],"required":true,"duration_s":1,"exit_code":0}`, i))
	}
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"gpus":"none","jobs":[`+strings.Join(jobs, ",")+`]}`), 0o644)
	db := historytest.DBs(t)["sqlite"](t)
	got, err := Import(context.Background(), ImportRequest{DB: db, Results: []string{dir}, Getenv: os.Getenv})
	if err != nil || len(got) != 2 || got[0].From != history.RowsFile || len(got[0].Notes) != 1 || !strings.Contains(got[0].Notes[0], "imported unchecked: the run record holds no digest") {
		t.Fatalf("wanted both shards' rows imported, noted as unchecked, got %+v %v", got, err)
	}

	// With the digests a run records, a shard whose summary.json was
	// changed after the run is named and not imported (issue 38: one
	// checked reader of earlier results); the other one is.
	jobs = jobs[:0]
	for i, d := range []string{"stage-a-cpu/1-of-2", "stage-a-cpu/2-of-2"} {
		data, _ := os.ReadFile(filepath.Join(dir, d, "summary.json"))
		sum := sha256.Sum256(data)
		jobs = append(jobs, fmt.Sprintf(`{"job":"pr-test/stage-a-cpu","kind":"stage","stage":"stage-a-cpu","shard":%d,"shards":2,"state":"passed","result":"success","gpus":0,"needs":[],"required":true,"duration_s":1,"exit_code":0,"results":%q,"summary_sha256":"%x"}`, i, d, sum))
	}
	os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"gpus":"none","jobs":[`+strings.Join(jobs, ",")+`]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "stage-a-cpu/2-of-2", history.RowsFile), []byte(rows(4)), 0o644)
	os.WriteFile(filepath.Join(dir, "stage-a-cpu/2-of-2", "summary.json"), []byte(`{"hw":"cpu","suite":"stage-a-cpu","shard":{"id":1,"size":2},"verdict":"passed","passed":true,"exit_code":0,"tests":[ ]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "stage-a-cpu/1-of-2", history.RowsFile), []byte(rows(3)), 0o644)
	got, err = Import(context.Background(), ImportRequest{DB: db, Results: []string{dir}, Getenv: os.Getenv})
	if err != nil || len(got) != 2 || got[0].Attempts != 1 || len(got[0].Notes) != 0 || got[1].Attempts != 0 || got[1].From != "" ||
		len(got[1].Notes) != 1 || !strings.Contains(got[1].Notes[0], "not imported: its folder does not prove what the run record says: its summary.json is not the one the run recorded") {
		t.Fatalf("wanted the proven shard imported and the changed one named, not imported, got %+v %v", got, err)
	}
}
