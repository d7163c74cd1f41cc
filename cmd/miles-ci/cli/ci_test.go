package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

func TestMain(m *testing.M) {
	// The runs of these tests take their GPUs in a lock folder of their
	// own, not the host's, which other runs on this machine share.
	dir, err := os.MkdirTemp("", "miles-ci-locks")
	if err != nil {
		panic(err)
	}
	defaultLockDir = func() string { return dir }
	resultsRoot = filepath.Join(dir, "miles-ci-results") // not in the source tree
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeSession is an engine that runs nothing.
type fakeSession struct{}

func (fakeSession) Container() stagerun.Container { return nil }
func (fakeSession) Close() error                  { return nil }

func (fakeSession) Check(context.Context) error { return nil }

// fakeCIEngine replaces the engine: each shard passes unless fail names its
// stage and shard ("stage-a-cpu/1"); it records the GPUs each shard got.
func fakeCIEngine(t *testing.T, fail map[string]bool) *sync.Map {
	t.Helper()
	oldConnect, oldRun := ciConnect, ciShardRun
	t.Cleanup(func() { ciConnect, ciShardRun = oldConnect, oldRun })
	ciConnect = func(context.Context, engine.Inputs, io.Writer) (ciSession, error) { return fakeSession{}, nil }
	seen := &sync.Map{}
	ciShardRun = func(_ context.Context, _ stagerun.Container, req stagerun.Request, _ string, _ *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		key := req.Stage.Name + "/0"
		if req.Plan != nil && req.Plan.Partition != nil {
			key = req.Stage.Name + "/" + string(rune('0'+req.Plan.Partition.ID))
		}
		seen.Store(key, req.VisibleDevices.String())
		s := report.Summary{HW: req.Stage.Backend, Suite: req.Stage.Name, Image: req.Image.Image, Verdict: report.Passed, Passed: true,
			Tests: []report.TestResult{{File: "tests/x/test_a.py", Status: report.Pass, Attempts: 1}}}
		if req.Plan != nil {
			s.Shard = req.Plan.Partition
		}
		if fail[key] {
			s.Verdict, s.Passed, s.ExitCode = report.Failed, false, 1
			s.Tests[0].Status = report.Fail
		}
		spec := stagerun.Spec{Image: req.Image.Image, Steps: []stagerun.Step{{Name: "deps", Phase: stagerun.PhaseDeps, Argv: []string{"true"}}}}
		js, err := json.Marshal(s)
		if err != nil {
			return stagerun.Result{}, spec, err
		}
		log := "::group::tests/x/test_a.py  (1/1 est=5s attempt=1)\nran " + key + "\n::endgroup::\n[1/1] tests/x/test_a.py  " + strings.ToUpper(string(s.Tests[0].Status)) + "  elapsed=1s\n"
		return stagerun.Result{Summary: s, Files: []stagerun.ResultFile{{Name: "summary.json", Data: string(js)}, {Name: "run.log", Data: log}}}, spec, nil
	}
	return seen
}

func TestCIRunsTheWholePRGraph(t *testing.T) {
	fakeCIEngine(t, nil)
	results := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--gpus", "none", "--quiet", "--results", results)
	if code != 0 {
		t.Fatalf("wanted exit 0, got %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"pr-test/stage-c-4-gpu-h200 shard 3/3", "passed", "dependency layers:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("wanted %q in the output, got\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "pr-test/stage-a-cpu shard 1/4            running") {
		t.Errorf("wanted one line per state change on stderr, got\n%s", stderr)
	}
	for _, f := range []string{"summary.json", "junit.xml", "step-summary.md", "report.html", "stage-a-cpu/4-of-4/summary.json", "stage-c-4-gpu-mi350/2-of-2/summary.json", "stage-b-cpu/summary.json"} {
		if _, err := os.Stat(filepath.Join(results, f)); err != nil {
			t.Errorf("wanted %s in the results: %v", f, err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(results, "summary.json"))
	var sum struct {
		Cancelled bool `json:"cancelled"`
		Jobs      []struct {
			Job, State string
			Shard      *int
		} `json:"jobs"`
	}
	if err := json.Unmarshal(data, &sum); err != nil || len(sum.Jobs) == 0 {
		t.Fatalf("summary.json: %v %s", err, data)
	}
	md, _ := os.ReadFile(filepath.Join(results, "step-summary.md"))
	if !strings.Contains(string(md), "```mermaid\nflowchart LR") {
		t.Errorf("wanted a Mermaid graph in the step summary, got\n%s", md)
	}
}

func TestCIFailingCPUShardStopsGPUStages(t *testing.T) {
	tests := []struct {
		name, labels string
		gpuState     string
	}{
		{"fast-fail", `["run-ci-megatron"]`, "skipped"},
		{"bypass-fastfail", `["run-ci-megatron","bypass-fastfail"]`, "passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeCIEngine(t, map[string]bool{"stage-a-cpu/1": true})
			code, stdout, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", tt.labels, "--gpus", "none", "--quiet")
			if code != 1 {
				t.Errorf("wanted exit 1 (a failing shard), got %d", code)
			}
			// No --results: a new folder under ./miles-ci-results, named
			// first and last; the failed shard's file, tail and run.log.
			_, dir, _ := strings.Cut(stderr, "miles-ci: the results go to ")
			dir, _, _ = strings.Cut(dir, "\n")
			if !strings.HasPrefix(dir, filepath.Join(resultsRoot, "pull_request-")) || !strings.HasSuffix(stdout, "results: "+dir+"\n") {
				t.Fatalf("wanted a new folder under %s named by the event, on stderr first and on stdout last, got %q\n%s\n%s", resultsRoot, dir, stderr, stdout)
			}
			log := filepath.Join(dir, "stage-a-cpu", "2-of-4", "run.log")
			want := "failed: pr-test/stage-a-cpu shard 2/4: tests/x/test_a.py fail\n    | ran stage-a-cpu/1\n    run.log: " + log + "\n"
			if !strings.Contains(stdout, want) {
				t.Errorf("wanted %q, got\n%s", want, stdout)
			}
			if _, err := os.Stat(log); err != nil {
				t.Error(err)
			}
			// report.html shows the failed shard's tail and links its run.log.
			page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
			for _, w := range []string{"<pre class=\"tail\">ran stage-a-cpu/1</pre>", `<a href="stage-a-cpu/2-of-4/run.log">`} {
				if !strings.Contains(string(page), w) {
					t.Errorf("wanted %q in report.html, got\n%s", w, page)
				}
			}
			// report reads the ci folder back: the graph and the same lines.
			code, out, errs := runCLI(t, nil, "report", "--results", dir)
			if code != 1 || !strings.Contains(out, "pr-test/stage-a-cpu shard 2/4") || !strings.Contains(out, want) ||
				!strings.HasSuffix(out, "page: "+filepath.Join(dir, "report.html")+" (open it in a browser)\n") {
				t.Errorf("wanted report to show the run, %q and the page, exit 1, got %d\n%s\n%s", want, code, out, errs)
			}
			for _, l := range strings.Split(stdout, "\n") {
				if strings.HasPrefix(l, "pr-test/stage-b-2-gpu-h200 ") && !strings.Contains(l, " "+tt.gpuState+" ") {
					t.Errorf("wanted stage-b-2-gpu-h200 %s, got %q", tt.gpuState, l)
				}
			}
		})
	}
}

func TestCIGPUs(t *testing.T) {
	seen := fakeCIEngine(t, nil)
	code, stdout, _ := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--gpus", "0,1,2,3", "--quiet", "--only", "stage-c-2-gpu-h200", "stage-c-8-gpu-h200")
	if code != 125 {
		t.Errorf("wanted exit 125 (an 8-GPU shard on a 4-GPU host), got %d\n%s", code, stdout)
	}
	if !strings.Contains(stdout, "needs 8 GPUs; this host has 4 (--gpus 0,1,2,3)") {
		t.Errorf("wanted the reason the 8-GPU shards did not run, got\n%s", stdout)
	}
	a, _ := seen.Load("stage-c-2-gpu-h200/0")
	b, _ := seen.Load("stage-c-2-gpu-h200/1")
	if a == "" || b == "" || a == b || len(a.(string)) != 3 {
		t.Errorf("wanted two 2-GPU device sets, got %q and %q", a, b)
	}
}

func TestCIDryRun(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--changed-files", filepath.Join(milesRepo(), "diffs", "cpu_only.z"), "--gpus", "none", "--dry-run", "--json")
	if code != 0 {
		t.Fatalf("wanted exit 0, got %d: %s", code, stderr)
	}
	var rep struct {
		Jobs []struct {
			Job    string   `json:"job"`
			Stage  string   `json:"stage"`
			Shard  *int     `json:"shard"`
			State  string   `json:"state"`
			Reason string   `json:"reason"`
			GPUs   int      `json:"gpus"`
			Needs  []string `json:"needs"`
			Tests  []string `json:"tests"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	byKey := map[string]string{}
	for _, j := range rep.Jobs {
		k := j.Job
		if j.Shard != nil {
			k += "/" + string(rune('0'+*j.Shard))
		}
		byKey[k] = j.State + " " + j.Reason
	}
	want := map[string]string{
		"pr-test/stage-c-8-gpu-h100":         "skipped the policy skips it on this pull request (skipped_stages, rules §4)",
		"pr-test/stage-c-4-gpu-h200/2":       "would-run ",
		"pr-test-rocm/stage-c-4-gpu-mi350/1": "would-run ",
		"pr-test/policy":                     "passed cadence=regular raw_labels=run-ci-megatron bypass_fastfail=false skipped_stages=[\"stage-c-8-gpu-h100\"]",
		"pr-test-rocm/deps":                  "passed skip_dependency_install=true",
		"pr-test/stage-a-cpu/3":              "would-run ",
		"pr-test/stage-b-cpu":                "would-run ",
		"pr-test/stage-c-8-gpu-h200/1":       "would-run ",
		"pr-test/image":                      "passed image radixark/miles:dev (default)",
		"pr-test-rocm/image":                 "passed image rocm/sgl-dev:miles-rocm720-mi35x (default)",
		"pr-test/stage-c-2-gpu-h200/0":       "would-run ",
		"pr-test/stage-b-2-gpu-h200":         "would-run ",
		"pr-test-rocm/stage-c-4-gpu-mi350/0": "would-run ",
		"pr-test-rocm/policy":                "passed cadence=regular raw_labels=run-ci-megatron bypass_fastfail=false skipped_stages=[\"stage-c-8-gpu-h100\"]",
	}
	for k, w := range want {
		if byKey[k] != w {
			t.Errorf("%s: wanted %q, got %q", k, w, byKey[k])
		}
	}
	if len(rep.Jobs) != 21 {
		t.Errorf("wanted 21 entries (jobs and shards), got %d", len(rep.Jobs))
	}
}

func TestCIUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"json without dry-run", []string{"--json"}, 2, "--json and --mermaid go with --dry-run"},
		{"bad gpus", []string{"--gpus", "x", "--dry-run"}, 2, `--gpus "x": "x" is not a device id (an index such as 0, or a uuid GPU-...)`},
		{"a device twice", []string{"--gpus", "h200:0-3,4,03", "--dry-run"}, 2, `--gpus "h200:0-3,4,03": device 3 is named twice`},
		{"unknown GPU model", []string{"--gpus", "h20:0-7", "--dry-run", "--event", "pull_request"}, 2, "--gpus h20:0-7: h20 is not a GPU model of this run; did you mean h200?"},
		{"cross-vendor substitute", []string{"--gpus", "h200:0-7", "--substitute", "mi350=h200", "--dry-run", "--event", "pull_request"}, 2, "--substitute mi350=h200: mi350 is an AMD GPU and h200 an NVIDIA one"},
		{"no event", []string{"--dry-run", "--gpus", "none"}, 1, "give the event: --event pull_request|schedule|workflow_dispatch|release, or --pr N"},
		{"release without lockfile", []string{"--dry-run", "--gpus", "none", "--event", "release"}, 1, "a release run needs the release branch's lockfile"},
		{"unknown cron", []string{"--dry-run", "--gpus", "none", "--event", "schedule", "--schedule", "1 2 3 4 5"}, 1, `no PR workflow of the checkout runs on schedule "1 2 3 4 5"`},
		// Which inputs go together (ci.CIRequest.Validate) is refused with
		// the usage before a hosts file, a lockfile or the PR is read.
		{"a dry run with --as-of", []string{"--dry-run", "--gpus", "none", "--event", "pull_request", "--as-of", "2026-01-02"}, 2,
			"miles-ci ci: --events and --as-of choose the runtime history a run orders its shards by and a what-if predicts with; a dry run reads none\nusage: miles-ci ci "},
		{"a what-if with an --as-of that is no date", []string{"--what-if", "--gpus", "h200:0-7", "--event", "pull_request", "--as-of", "99999-01-01"}, 2,
			"miles-ci ci: --as-of \"99999-01-01\" is not a date; give YYYY-MM-DD\nusage: miles-ci ci "},
		{"gpus and hosts", []string{"--dry-run", "--gpus", "none", "--hosts", "/nonexistent/hosts.yaml"}, 2,
			"miles-ci ci: give --gpus (one host) or --hosts (a fleet), not both\nusage: miles-ci ci "},
		{"pr with another event", []string{"--dry-run", "--gpus", "none", "--pr", "2874", "--event", "schedule"}, 2,
			"miles-ci ci: --pr is a pull_request's facts; drop --event, --schedule and --release-lock\nusage: miles-ci ci "},
		{"pr with a schedule", []string{"--dry-run", "--gpus", "none", "--pr", "2874", "--schedule", "0 15 * * 6"}, 2, "--pr is a pull_request's facts"},
		{"pr with a lockfile", []string{"--dry-run", "--gpus", "none", "--pr", "2874", "--release-lock", "/nonexistent/release-lock.json"}, 2, "--pr is a pull_request's facts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, append([]string{"ci", "--repo", milesRepo()}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.err) {
				t.Errorf("wanted exit %d and %q, got %d and %q", tt.code, tt.err, code, stderr)
			}
		})
	}
}

// TestCIRecords: ci --record writes each shard's attempts after its results
// (the fake engine, on SQLite), each shard's rows kept in its own results
// folder; a store that fails is a warning per shard naming where its rows
// are, and the verdict stands.
func TestCIRecords(t *testing.T) {
	fakeCIEngine(t, nil)
	passed := ciShardRun
	ciShardRun = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		res, spec, err := passed(ctx, c, req, nonce, m)
		exit := 0
		res.Summary.Tests[0] = report.TestResult{File: "tests/fast/test_" + req.Stage.Name + ".py", Status: report.Pass, Attempts: 1, ElapsedS: 3, ExitCode: &exit, EstTime: 5,
			Tries: []report.Try{{Status: report.Pass, ElapsedS: 3}}}
		if req.Plan != nil && req.Plan.Partition != nil {
			res.Summary.Tests[0].File = fmt.Sprintf("tests/fast/test_%s_%d.py", req.Stage.Name, req.Plan.Partition.ID)
		}
		return res, spec, err
	}
	dir := t.TempDir()
	args := func(results string) []string {
		return []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
			"--gpus", "none", "--quiet", "--only", "cpu", "--results", results}
	}
	db := filepath.Join(dir, "h.db")
	results := filepath.Join(dir, "results")
	code, _, stderr := runCLI(t, nil, append(args(results), "--record", "--db", db)...)
	if code != 0 || !strings.Contains(stderr, "miles-ci: recorded the attempts of 5 shard(s) in "+db) {
		t.Fatalf("wanted exit 0 and 5 shards recorded, got %d\n%s", code, stderr)
	}
	s, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.Rows(context.Background(), time.Time{}, time.Time{})
	s.Close()
	if err != nil || len(rows) != 5 {
		t.Errorf("wanted a row per shard (5), got %d (%v)", len(rows), err)
	}
	for _, shard := range []string{"stage-a-cpu/1-of-4", "stage-a-cpu/4-of-4", "stage-b-cpu"} {
		if _, err := os.Stat(filepath.Join(results, shard, history.RowsFile)); err != nil {
			t.Errorf("wanted %s's rows kept in its folder: %v", shard, err)
		}
	}
	results = filepath.Join(dir, "results2")
	code, _, stderr = runCLI(t, map[string]string{history.EnvDB: "postgres://ci:hunter2hunter2@127.0.0.1:1/x?connect_timeout=1"}, args(results)...)
	kept := filepath.Join(results, "stage-a-cpu", "2-of-4")
	if code != 0 || strings.Count(stderr, "runtime history write failed (the run's result stands): stage-") != 5 || strings.Contains(stderr, "hunter2") ||
		!strings.Contains(stderr, "miles-ci history import --results "+kept) {
		t.Errorf("wanted exit 0 and a masked warning per shard naming its rows, got %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(kept, history.RowsFile)); err != nil {
		t.Errorf("wanted the rows kept: %v", err)
	}
	if code, _, stderr := runCLI(t, nil, args(filepath.Join(dir, "results3"))...); code != 0 || strings.Contains(stderr, "runtime history") {
		t.Errorf("wanted no recording without --record or a configured history, got %d\n%s", code, stderr)
	}
}

// TestCIProgress: on a terminal the state changes redraw a live table on
// stdout, erased at the end; elsewhere they are one line each on stderr.
func TestCIProgress(t *testing.T) {
	m, _ := report.NewMasker(nil)
	var out, errs strings.Builder
	env := Env{Stdout: &out, Stderr: &errs, Getenv: func(string) string { return "" }}
	p := newCIProgress(env, m, true)
	p.notify(cirun.JobReport{Key: "pr-test/policy", State: cirun.Running})
	p.notify(cirun.JobReport{Key: "pr-test/policy", State: cirun.Passed})
	p.done()
	want := "miles-ci ci [   0s] 1 jobs: 1 running\n  pr-test/policy  running\n" +
		"\x1b[2A\r\x1b[Jmiles-ci ci [   0s] 1 jobs: 1 passed\n" + "\x1b[1A\r\x1b[J"
	if out.String() != want || errs.Len() != 0 {
		t.Errorf("wanted the table drawn, redrawn and erased on stdout\n%q\ngot\n%q and %q on stderr", want, out.String(), errs.String())
	}
	out.Reset()
	p = newCIProgress(env, m, false)
	p.notify(cirun.JobReport{Key: "pr-test/policy", State: cirun.Passed, Reason: "cadence=regular"})
	p.done()
	if out.Len() != 0 || !strings.HasSuffix(errs.String(), "pr-test/policy                           passed: cadence=regular\n") {
		t.Errorf("wanted one line on stderr, got %q and %q", out.String(), errs.String())
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	term := func(string) string { return "xterm" }
	if isTerminal(f, term) || isTerminal(&out, term) {
		t.Error("wanted a file and a buffer not taken for a terminal")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !isTerminal(tty, term) || isTerminal(tty, func(string) string { return "dumb" }) {
			t.Error("wanted /dev/tty a terminal, unless TERM is dumb")
		}
	}
}

// TestCIRunsThePool: a real run of the B200 pool job (the fake engine):
// each planned file runs alone, as run --stage stage-c-b200 --batch N
// runs it, with its suite, GPU count and runners, into its own results
// folder.
func TestCIRunsThePool(t *testing.T) {
	fakeCIEngine(t, nil)
	passed := ciShardRun
	var mu sync.Mutex
	var ran []string
	ciShardRun = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		if req.File != nil {
			mu.Lock()
			ran = append(ran, fmt.Sprintf("%s %s %d %v %s", req.File.File, req.File.Suite, req.File.NumGPUs, req.Stage.RunsOn, req.Stage.Name))
			mu.Unlock()
		}
		return passed(ctx, c, req, nonce, m)
	}
	results := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := runCLI(t, nil, "ci", "--repo", filepath.Join("..", "..", "..", "testdata", "miles-b200pool"), "--event", "pull_request",
		"--pr-labels-json", `["run-ci-megatron","run-on-blackwell"]`, "--gpus", "none", "--quiet", "--only", "stage-c-8-gpu-b200", "stage-c-4-gpu-b200", "--results", results)
	if code != 0 {
		t.Fatalf("wanted exit 0, got %d\n%s\n%s", code, stdout, stderr)
	}
	slices.Sort(ran)
	want := []string{
		"tests/e2e/megatron/test_b200_eight.py stage-c-8-gpu-b200 8 [b200 8gpu] stage-c-8-gpu-b200",
		"tests/e2e/megatron/test_portable_eight.py stage-c-8-gpu-b200 8 [b200 8gpu] stage-c-8-gpu-b200",
		"tests/e2e/megatron/test_portable_four.py stage-c-4-gpu-b200 2 [b200 2gpu] stage-c-4-gpu-b200",
	}
	if !slices.Equal(ran, want) {
		t.Errorf("wanted each pool file run alone\n%s\ngot\n%s", strings.Join(want, "\n"), strings.Join(ran, "\n"))
	}
	for _, f := range []string{"stage-c-8-gpu-b200/0/summary.json", "stage-c-8-gpu-b200/1/summary.json", "stage-c-4-gpu-b200/2/summary.json"} {
		if _, err := os.Stat(filepath.Join(results, f)); err != nil {
			t.Errorf("wanted %s in the results: %v", f, err)
		}
	}
	if !strings.Contains(stderr, "stage-c-b200/test (Batch 1 / 8 GPU / tests/e2e/megatron/test_b200_eight.py) passed") {
		t.Errorf("wanted a state line for each pool file, got\n%s", stderr)
	}
}

func TestCIRerunFailed(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results")
	args := func(sha string, extra ...string) []string {
		return append([]string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--gpus", "none", "--quiet", "--only", "cpu", "--head-sha", sha}, extra...)
	}
	fakeCIEngine(t, map[string]bool{"stage-a-cpu/1": true})
	if code, stdout, stderr := runCLI(t, nil, args("abc", "--results", results)...); code != 1 {
		t.Fatalf("attempt 1: wanted exit 1, got %d\n%s\n%s", code, stdout, stderr)
	}
	seen := fakeCIEngine(t, nil)
	code, stdout, stderr := runCLI(t, nil, args("abc", "--rerun-failed", results)...)
	if code != 0 {
		t.Fatalf("attempt 2: wanted exit 0, got %d\n%s\n%s", code, stdout, stderr)
	}
	ran := []string{}
	seen.Range(func(k, _ any) bool { ran = append(ran, k.(string)); return true })
	if len(ran) != 1 || ran[0] != "stage-a-cpu/1" {
		t.Errorf("wanted only stage-a-cpu/1 run again, got %v", ran)
	}
	squeezed := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{"pr-test/stage-a-cpu shard 2/4 passed attempt 2", "pr-test/stage-a-cpu shard 1/4 passed reused (attempt 1)",
		// The resolvers are evaluated again (their recorded outputs are not
		// taken on trust): the shard and 5 resolvers re-ran, 4 shards reused.
		"pr-test/policy passed attempt 2", "attempt 2 re-ran 6, reused 4", "results: " + results} {
		if !strings.Contains(squeezed, want) {
			t.Errorf("wanted %q in the output, got\n%s", want, stdout)
		}
	}
	if page, _ := os.ReadFile(filepath.Join(results, "report.html")); !strings.Contains(string(page), "reused (attempt 1)") || !strings.Contains(string(page), "passed (exit 0)") {
		t.Errorf("wanted the re-run's report.html to show the reused shards and the new verdict, got\n%s", page)
	}
	var out, errb bytes.Buffer // runCLI drops the notices
	code = Run(args("abc", "--rerun-failed", results), Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != 0 || !strings.Contains(errb.String(), "nothing to re-run: no job of attempt 2 failed") || !strings.Contains(out.String(), "reused (attempt 1)") {
		t.Errorf("attempt 3: wanted nothing to re-run, exit 0, got %d\n%s", code, errb.String())
	}
	code, _, stderr = runCLI(t, nil, args("def", "--rerun-failed", results)...)
	if code != 2 || !strings.Contains(stderr, "checkout commit: abc then, def now") {
		t.Errorf("wanted another commit refused (exit 2) naming it, got %d\n%s", code, stderr)
	}
}

func TestCIFleet(t *testing.T) {
	fakeCIEngine(t, nil)
	connect, run := ciConnect, ciShardRun
	var mu sync.Mutex
	var sessions []context.Context
	ciConnect = func(ctx context.Context, in engine.Inputs, log io.Writer) (ciSession, error) {
		if in.RunnerHost == "tcp://down:1" {
			return nil, fmt.Errorf("connecting to a Dagger engine: refused")
		}
		mu.Lock()
		sessions = append(sessions, ctx)
		mu.Unlock()
		return connect(ctx, in, log)
	}
	ended := 0
	ciShardRun = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		// A session lives as long as the run: the context it was opened on
		// must not end with the shard that opened it.
		mu.Lock()
		for _, s := range sessions {
			if s.Err() != nil {
				ended++
			}
		}
		mu.Unlock()
		return run(ctx, c, req, nonce, m)
	}
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts.yml")
	os.WriteFile(hosts, []byte(`
- {name: a, gpus: "none:h200:0-7"}
- {name: b, gpus: "none:mi350:0-3", engine: "tcp://down:1", cpu: false}
- {name: c, gpus: "none:h100:0-7", engine: "unix:///run/c.sock"}
`), 0o644)
	results := filepath.Join(dir, "results")
	code, stdout, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--hosts", hosts, "--quiet", "--results", results)
	if code != 125 {
		t.Fatalf("wanted exit 125 (the MI350 shards' only host is down), got %d\n%s\n%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(results, "summary.json"))
	var sum struct {
		Hosts []cirun.HostReport `json:"hosts"`
		Jobs  []cirun.JobReport  `json:"jobs"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Hosts) != 3 {
		t.Errorf("wanted the three hosts in summary.json, got %+v", sum.Hosts)
	}
	for _, j := range sum.Jobs {
		switch {
		case j.Backend == "rocm":
			if j.State != cirun.NotRun || !strings.Contains(j.Reason, "b: 4 MI350 (no CPU work) (down: host b: connecting to a Dagger engine: refused)") {
				t.Errorf("%s: wanted not-run naming the down host, got %s %q", j.Key, j.State, j.Reason)
			}
		case j.Stage == "stage-c-8-gpu-h100":
			if j.Host != "c" || j.State != cirun.Passed {
				t.Errorf("%s: wanted passed on c (its H100s), got %s on %q", j.Key, j.State, j.Host)
			}
		case j.Backend == "cuda":
			if j.Host != "a" || j.State != cirun.Passed {
				t.Errorf("%s: wanted passed on a (its H200s), got %s on %q: %s", j.Key, j.State, j.Host, j.Reason)
			}
		case j.Backend == "cpu":
			if j.Host == "b" || j.Host == "" {
				t.Errorf("%s: a CPU shard on %q (b takes no CPU work)", j.Key, j.Host)
			}
		}
	}
	if ended > 0 {
		t.Errorf("a host's session was opened on a context that ended before the run (%d shards saw it)", ended)
	}
	if !strings.Contains(stdout, "(--hosts: a none:h200:0-7, b none:mi350:0-3, c none:h100:0-7)") {
		t.Errorf("wanted the hosts in the table's first line, got\n%s", stdout)
	}
}

func TestCITwoRunsNeverShareADevice(t *testing.T) {
	// Two runs in one process stand for two processes: flock locks belong
	// to the open file, so the second run's leases wait for the first's.
	seen := fakeCIEngine(t, nil)
	_ = seen
	run := ciShardRun
	var mu sync.Mutex
	held := map[string]int{}
	overlap := ""
	ciShardRun = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		mu.Lock()
		for _, d := range req.VisibleDevices.Strings() {
			if held[d]++; held[d] > 1 {
				overlap = d
			}
		}
		mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		for _, d := range req.VisibleDevices.Strings() {
			held[d]--
		}
		mu.Unlock()
		return run(ctx, c, req, nonce, m)
	}
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
				"--gpus", "none:h200:0-3", "--quiet", "--only", "stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-b-2-gpu-h200")
		}()
	}
	wg.Wait()
	if codes[0] != 0 || codes[1] != 0 {
		t.Errorf("wanted both runs to pass, got exits %v", codes)
	}
	if overlap != "" {
		t.Errorf("device %s was held by two shards at once", overlap)
	}
}

// TestCIGPUsAllReadsTheModel: --gpus all reads the host's GPUs with
// nvidia-smi's CSV query (here a script printing what a real 8-GPU H100
// host prints) and schedules each shard on devices of its model.
func TestCIGPUsAllReadsTheModel(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\ni=0\nwhile [ $i -lt 8 ]; do echo \"$i, NVIDIA H100 80GB HBM3, GPU-0000000$i-0000-4000-8000-000000000000\"; i=$((i+1)); done\n"
	if err := os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	code, stdout, stderr := runCLI(t, nil, "ci", "--dry-run", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--gpus", "all", "--only", "stage-c-8-gpu-h100", "stage-c-4-gpu-h200")
	if code != 125 {
		t.Fatalf("wanted exit 125 (the H200 stage on an H100 host), got %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"(--gpus h100:0-7)", "needs 4 H200 GPUs; this host has 8 H100 (--gpus h100:0-7)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("wanted %q in\n%s", want, stdout)
		}
	}
}

// TestCIDryRerunCounts: a dry run of a re-run counts every job it marks
// attempt 2 as re-run (issue 40: "re-ran 5" beside 11 would-run lines).
func TestCIDryRerunCounts(t *testing.T) {
	fakeCIEngine(t, map[string]bool{"stage-a-cpu/1": true})
	results := filepath.Join(t.TempDir(), "results")
	args := []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--gpus", "none", "--quiet", "--head-sha", "abc"}
	if code, _, stderr := runCLI(t, nil, append(args, "--results", results)...); code != 1 {
		t.Fatalf("attempt 1: %d\n%s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, nil, append(args, "--dry-run", "--rerun-failed", results)...)
	if code != 0 {
		t.Fatalf("wanted the dry re-run's exit 0, got %d\n%s", code, stderr)
	}
	again, reused := 0, 0
	for _, l := range strings.Split(stdout, "\n") {
		switch {
		case strings.Contains(l, " jobs: "): // the tally
		case strings.Contains(l, "reused (attempt 1)"):
			reused++
		case strings.Contains(l, " attempt 2 ") || strings.HasSuffix(l, " attempt 2"):
			again++
		}
	}
	if want := fmt.Sprintf("attempt 2 would re-run %d, reuse %d", again, reused); again == 0 || !strings.Contains(stdout, want) {
		t.Errorf("wanted the tally to count the lines, %q, got\n%s", want, stdout)
	}
}
