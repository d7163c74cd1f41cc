package ci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

// attemptShards runs every shard as EngineShards does, with a run that
// fails the shards named in fail and writes a run.log saying which attempt
// wrote it; ran lists the shards it ran.
func attemptShards(attempt int, fail map[string]bool) (*EngineShards, *[]string) {
	m, _ := report.NewMasker(nil)
	var mu sync.Mutex
	ran := []string{}
	e := &EngineShards{Container: func() stagerun.Container { return imageFake{} }, Masker: m,
		Run: func(_ context.Context, _ stagerun.Container, req stagerun.Request, _ string, _ *report.Masker) (stagerun.Result, stagerun.Spec, error) {
			name := req.Stage.Name
			if req.Plan != nil && req.Plan.Partition != nil {
				name += fmt.Sprintf("/%d", req.Plan.Partition.ID)
			}
			mu.Lock()
			ran = append(ran, name)
			mu.Unlock()
			sum := report.Summary{Suite: req.Stage.Name, Verdict: report.Passed, Passed: true}
			if fail[name] {
				sum = report.Summary{Suite: req.Stage.Name, Verdict: report.Failed, ExitCode: 1, Tests: []report.TestResult{{File: "tests/x.py", Status: report.Fail}}}
			}
			if req.Plan != nil {
				sum.Shard = req.Plan.Partition
			}
			js, err := json.Marshal(sum)
			return stagerun.Result{Summary: sum, Files: []stagerun.ResultFile{
				{Name: stagerun.SummaryFile, Data: string(js)},
				{Name: "run.log", Data: fmt.Sprintf("%s ran in attempt %d\n", name, attempt)},
				{Name: "artifacts/out.txt", Data: "kept\x00bytes"},
			}}, stagerun.Spec{}, err
		}}
	return e, &ran
}

// writeFolder writes a run's results files as the CLI does.
func writeFolder(t *testing.T, dir string, files []stagerun.ResultFile) {
	t.Helper()
	os.RemoveAll(dir)
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.Data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCIRerunFailed(t *testing.T) {
	t.Run("folders named 2-of-4", func(t *testing.T) { testCIRerunFailed(t, false) })
	t.Run("folders of an older run, named by the 0-based id", func(t *testing.T) { testCIRerunFailed(t, true) })
}

func testCIRerunFailed(t *testing.T, legacy bool) {
	repo := ciTree(t)
	results := filepath.Join(t.TempDir(), "results")
	base := CIRequest{Repo: repo, Event: "pull_request", PRLabelsJSON: `["run-ci-megatron"]`, Host: cirun.Host{StandIn: true},
		Only: []string{"stage-a-cpu", "stage-b-cpu", "stage-c-2-gpu-h200"}, HeadSHA: "c0ffee", RunID: "run-1"}
	first, _ := attemptShards(1, map[string]bool{"stage-a-cpu/1": true})
	req := base
	req.Shards = first
	ans, err := CI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Report.ExitStatus() != 1 || ans.Report.Attempt != 1 {
		t.Fatalf("attempt 1: wanted exit 1 at attempt 1, got exit %d at %d\n%s", ans.Report.ExitStatus(), ans.Report.Attempt, ans.Report.Text())
	}
	res, err := first.Results(ans.Report, ans.Graph)
	if err != nil {
		t.Fatal(err)
	}
	writeFolder(t, results, res.Files)
	keptLog, _ := os.ReadFile(filepath.Join(results, "stage-a-cpu", "1-of-4", "run.log"))
	if legacy {
		// A folder written before the one shard number kept shards as
		// STAGE/ID, 0-based: a re-run still finds them.
		for _, d := range [][2]string{{"stage-a-cpu/1-of-4", "stage-a-cpu/0"}, {"stage-a-cpu/2-of-4", "stage-a-cpu/1"}, {"stage-a-cpu/3-of-4", "stage-a-cpu/2"}, {"stage-a-cpu/4-of-4", "stage-a-cpu/3"}} {
			if err := os.Rename(filepath.Join(results, d[0]), filepath.Join(results, d[1])); err != nil {
				t.Fatal(err)
			}
		}
	}

	prev, err := usecase.ReadPreviousRun(results)
	if err != nil {
		t.Fatal(err)
	}
	second, ran := attemptShards(2, nil)
	req = base
	req.Shards, req.RunID, req.Previous = second, "run-2", prev
	ans, err = CI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(*ran)
	if want := []string{"stage-a-cpu/1", "stage-c-2-gpu-h200/0", "stage-c-2-gpu-h200/1"}; !slices.Equal(*ran, want) {
		t.Errorf("wanted only the failed shard and the stages its failure skipped to run, %v, got %v", want, *ran)
	}
	if ans.Report.ExitStatus() != 0 || ans.Report.Attempt != 2 || ans.Report.Run.RunID != "run-1" {
		t.Errorf("attempt 2: wanted exit 0 at attempt 2 of run-1, got exit %d at %d of %q", ans.Report.ExitStatus(), ans.Report.Attempt, ans.Report.Run.RunID)
	}
	for _, j := range ans.Report.Jobs {
		want := "attempt 2"
		if j.Stage == "stage-b-cpu" || j.Stage == "stage-a-cpu" && *j.Shard != 1 {
			want = "reused (attempt 1)"
		}
		if j.Kind == cirun.KindStage && j.State == cirun.Passed && j.AttemptText() != want {
			t.Errorf("%s: wanted %q, got %q", j.Title(), want, j.AttemptText())
		}
	}
	res, err = second.Results(ans.Report, ans.Graph)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range res.Files {
		files[f.Name] = f.Data
	}
	if got := files["stage-a-cpu/1-of-4/run.log"]; got != string(keptLog) || got != "stage-a-cpu/0 ran in attempt 1\n" {
		t.Errorf("wanted the passed shard's run.log kept byte for byte, got %q", got)
	}
	if got := files["stage-a-cpu/1-of-4/artifacts/out.txt"]; got != "kept\x00bytes" {
		t.Errorf("wanted the kept artifact, got %q", got)
	}
	if got := files["stage-a-cpu/2-of-4/run.log"]; got != "stage-a-cpu/1 ran in attempt 2\n" {
		t.Errorf("wanted the re-run shard's new run.log, got %q", got)
	}
	if got := second.Summaries(); len(got) != 3 {
		t.Errorf("wanted only the 3 re-run shards recorded, got %d", len(got))
	}

	// Nothing failed in attempt 2: a third asks for nothing.
	writeFolder(t, results, res.Files)
	if prev, err = usecase.ReadPreviousRun(results); err != nil {
		t.Fatal(err)
	}
	req = base
	req.Previous = prev
	ans, err = CI(context.Background(), req)
	if err != nil || !ans.NothingToRerun || ans.Report.ExitStatus() != 0 || !strings.Contains(ans.Messages[0].Text, "nothing to re-run") {
		t.Errorf("wanted nothing to re-run, exit 0, got %v %+v", err, ans.Messages)
	}
}

func TestCIRerunRefusesAnotherRun(t *testing.T) {
	repo := ciTree(t)
	results := filepath.Join(t.TempDir(), "results")
	first, _ := attemptShards(1, map[string]bool{"stage-a-cpu/0": true})
	req := CIRequest{Repo: repo, Event: "pull_request", Host: cirun.Host{StandIn: true}, Only: []string{"stage-a-cpu"}, HeadSHA: "c0ffee", RunID: "1", Shards: first}
	ans, err := CI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := first.Results(ans.Report, ans.Graph)
	writeFolder(t, results, res.Files)
	prev, err := usecase.ReadPreviousRun(results)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*CIRequest)
		want string
	}{
		{"another commit", func(r *CIRequest) { r.HeadSHA = "decade" }, "checkout commit: c0ffee then, decade now"},
		{"another event", func(r *CIRequest) { r.Event, r.Schedule = "schedule", "0 15 * * 0-5" }, "event: pull_request then, schedule now; schedule: (none) then, 0 15 * * 0-5 now"},
		{"another label", func(r *CIRequest) { r.PRLabelsJSON = `["run-ci-fsdp"]` }, "PR labels: (none) then, run-ci-fsdp now"},
		{"no commit", func(r *CIRequest) { r.HeadSHA = "" }, `no commit to compare (this checkout's "", the run's "c0ffee")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := req
			r.Previous, r.Shards = prev, nil
			tc.edit(&r)
			_, err := CI(context.Background(), r)
			if !errors.Is(err, usecase.ErrNotSameRun) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("wanted an error naming %q, got %v", tc.want, err)
			}
		})
	}
}

// TestCIRerunTrustsOnlyWhatItChecks: a re-run keeps a shard only when its
// own folder proves it passed, and runs every other one again, naming it
// (issue 38 items 1, 2: a forged or edited folder passed).
func TestCIRerunTrustsOnlyWhatItChecks(t *testing.T) {
	repo := ciTree(t)
	base := CIRequest{Repo: repo, Event: "pull_request", Host: cirun.Host{StandIn: true}, Only: []string{"stage-a-cpu"}, HeadSHA: "c0ffee", RunID: "run-1"}
	// first writes attempt 1, with shard 1/4 (0-based 0) failing, to a new folder.
	first := func(t *testing.T) string {
		results := filepath.Join(t.TempDir(), "results")
		shards, _ := attemptShards(1, map[string]bool{"stage-a-cpu/0": true})
		req := base
		req.Shards = shards
		ans, err := CI(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		res, err := shards.Results(ans.Report, ans.Graph)
		if err != nil {
			t.Fatal(err)
		}
		writeFolder(t, results, res.Files)
		return results
	}
	editRecord := func(t *testing.T, results string, edit func(j map[string]any)) {
		t.Helper()
		name := filepath.Join(results, "summary.json")
		data, _ := os.ReadFile(name)
		var s map[string]any
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		for _, j := range s["jobs"].([]any) {
			edit(j.(map[string]any))
		}
		data, _ = json.Marshal(s)
		os.WriteFile(name, data, 0o644)
	}
	for _, tc := range []struct {
		name string
		// edit damages the folder; ran are the shards attempt 2 runs
		// (0-based), warn the reason a kept one is named with.
		edit func(t *testing.T, results string)
		ran  []string
		warn string
	}{
		{"as written", func(*testing.T, string) {}, []string{"stage-a-cpu/0"}, ""},
		{"the failed shard set to passed in the record only", func(t *testing.T, results string) {
			editRecord(t, results, func(j map[string]any) {
				if j["state"] == "failed" {
					j["state"], j["result"], j["exit_code"] = "passed", "success", 0.0
				}
			})
		}, []string{"stage-a-cpu/0"}, "its summary.json says failed where the run record says passed"},
		{"a passed shard's summary.json edited", func(t *testing.T, results string) {
			name := filepath.Join(results, "stage-a-cpu", "2-of-4", "summary.json")
			data, _ := os.ReadFile(name)
			os.WriteFile(name, append(data, ' '), 0o644)
		}, []string{"stage-a-cpu/0", "stage-a-cpu/1"}, "is not the one the run recorded"},
		{"a passed shard's summary.json a link", func(t *testing.T, results string) {
			name := filepath.Join(results, "stage-a-cpu", "2-of-4", "summary.json")
			os.Rename(name, name+".real")
			os.Symlink(name+".real", name)
		}, []string{"stage-a-cpu/0", "stage-a-cpu/1"}, "is a symbolic link"},
		{"a passed shard's folder gone", func(t *testing.T, results string) {
			os.RemoveAll(filepath.Join(results, "stage-a-cpu", "3-of-4"))
		}, []string{"stage-a-cpu/0", "stage-a-cpu/2"}, "its folder stage-a-cpu/3-of-4 is missing"},
		{"an older run's record, without digests", func(t *testing.T, results string) {
			editRecord(t, results, func(j map[string]any) { delete(j, "summary_sha256") })
		}, []string{"stage-a-cpu/0", "stage-a-cpu/1", "stage-a-cpu/2", "stage-a-cpu/3"}, "holds no digest of its summary.json"},
		{"a passed shard's folder holding another shard's record", func(t *testing.T, results string) {
			editRecord(t, results, func(j map[string]any) {
				if s, ok := j["shard"].(float64); ok && s == 2 {
					var other map[string]any
					data, _ := os.ReadFile(filepath.Join(results, "summary.json"))
					var rec map[string]any
					json.Unmarshal(data, &rec)
					for _, o := range rec["jobs"].([]any) {
						if s1, ok := o.(map[string]any)["shard"].(float64); ok && s1 == 1 {
							other = o.(map[string]any)
						}
					}
					j["summary_sha256"] = other["summary_sha256"]
				}
			})
			a, b := filepath.Join(results, "stage-a-cpu", "3-of-4", "summary.json"), filepath.Join(results, "stage-a-cpu", "2-of-4", "summary.json")
			data, _ := os.ReadFile(b)
			os.WriteFile(a, data, 0o644)
		}, []string{"stage-a-cpu/0", "stage-a-cpu/2"}, "its summary.json is of another shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := first(t)
			tc.edit(t, results)
			prev, err := usecase.ReadPreviousRun(results)
			if err != nil {
				t.Fatal(err)
			}
			second, ran := attemptShards(2, nil)
			req := base
			req.Shards, req.Previous = second, prev
			ans, err := CI(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(*ran)
			if !slices.Equal(*ran, tc.ran) {
				t.Errorf("wanted attempt 2 to run %v, got %v", tc.ran, *ran)
			}
			var warned []string
			for _, m := range ans.Messages {
				if m.Level == "warning" && strings.HasPrefix(m.Text, "--rerun-failed") {
					warned = append(warned, m.Text)
				}
			}
			if tc.warn == "" && len(warned) > 0 || tc.warn != "" && (len(warned) == 0 || !strings.Contains(warned[0], tc.warn) || !strings.Contains(warned[0], "it runs again")) {
				t.Errorf("wanted a warning naming %q, got %q", tc.warn, warned)
			}
		})
	}

	// A folder holding only a summary.json that says every job passed
	// (issue 38 item 1) is refused: it holds no shard's record.
	t.Run("a forged folder", func(t *testing.T) {
		results := first(t)
		editRecord(t, results, func(j map[string]any) {
			if j["state"] == "failed" {
				j["state"] = "passed"
			}
		})
		os.RemoveAll(filepath.Join(results, "stage-a-cpu"))
		_, err := usecase.ReadPreviousRun(results)
		if !errors.Is(err, usecase.ErrNotResults) || !strings.Contains(err.Error(), "says 4 shard(s) ran, but the folder holds none of their records") {
			t.Errorf("wanted the folder refused, got %v", err)
		}
	})
}

// TestCIRerunChecksNothingToRerun: a record that says nothing failed is
// checked by the graph, evaluated on what it keeps: a stage it records as
// skipped, whose if: holds on this commit and these facts, runs (an edited
// record said "nothing to re-run" and kept its verdict).
func TestCIRerunChecksNothingToRerun(t *testing.T) {
	repo := ciTree(t)
	base := CIRequest{Repo: repo, Event: "pull_request", Host: cirun.Host{StandIn: true}, Only: []string{"stage-a-cpu", "stage-b-cpu"}, HeadSHA: "c0ffee", RunID: "run-1"}
	results := filepath.Join(t.TempDir(), "results")
	shards, _ := attemptShards(1, nil)
	req := base
	req.Shards = shards
	ans, err := CI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := shards.Results(ans.Report, ans.Graph)
	writeFolder(t, results, res.Files)
	name := filepath.Join(results, "summary.json")
	data, _ := os.ReadFile(name)
	var s map[string]any
	json.Unmarshal(data, &s)
	for _, j := range s["jobs"].([]any) {
		if job := j.(map[string]any); job["stage"] == "stage-b-cpu" {
			job["state"], job["result"], job["reason"] = "skipped", "skipped", "edited"
			delete(job, "summary_sha256")
		}
	}
	data, _ = json.Marshal(s)
	os.WriteFile(name, data, 0o644)
	os.RemoveAll(filepath.Join(results, "stage-b-cpu"))

	prev, err := usecase.ReadPreviousRun(results)
	if err != nil || !prev.NothingToRerun() {
		t.Fatalf("wanted a record that says nothing failed, got %v", err)
	}
	req = base
	req.Previous = prev
	ans, err = CI(context.Background(), req)
	if err != nil || ans.NothingToRerun || !slices.ContainsFunc(ans.Messages, func(m usecase.Message) bool {
		return strings.Contains(m.Text, "its record says no job failed, but the graph runs pr-test/stage-b-cpu")
	}) {
		t.Fatalf("wanted the dry check to find stage-b-cpu to run, got %v %v %+v", err, ans.NothingToRerun, ans.Messages)
	}
	second, ran := attemptShards(2, nil)
	req.Shards = second
	if _, err = CI(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(*ran, []string{"stage-b-cpu"}) {
		t.Errorf("wanted stage-b-cpu run again, got %v", *ran)
	}
}
