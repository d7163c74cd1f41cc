package usecase

import (
	"context"
	"fmt"
	"slices"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/report/htmlpage"
	"github.com/radixark/miles-ci/stagerun"
)

// PrepareAndTest prepares and runs one request's container
// (stagerun.Prepare, then stagerun.Test): EngineShards.Run's default, and
// each attempt of a triage.
func PrepareAndTest(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
	return GateJudge{}.PrepareAndTest(ctx, c, req, nonce, m)
}

// PrepareAndTest is usecase.PrepareAndTest with the run's metric records
// judged by g (WithGate) before its page.
func (g GateJudge) PrepareAndTest(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
	p, spec, err := stagerun.Prepare(ctx, c, req, nonce)
	if err != nil {
		return stagerun.Result{}, spec, err
	}
	res, err := stagerun.Test(ctx, p, spec, nonce, m)
	if err != nil {
		return res, spec, err
	}
	res = WithGate(ctx, res, req, g, m)
	res, err = WithPage(res, req, m)
	return res, spec, err
}

// WithPage adds a run's report.html to its results files
// (htmlpage.RenderStage): the page of its one shard, for run, file-run,
// each shard folder of a ci run and each triage attempt.
func WithPage(res stagerun.Result, req stagerun.Request, m *report.Masker) (stagerun.Result, error) {
	where := "--gpus " + req.GPUs.String()
	if len(req.VisibleDevices) > 0 {
		where += ", visible devices " + req.VisibleDevices.String()
	}
	var log string
	for _, f := range res.Files {
		if f.Name == stagerun.RunLogFile {
			log = f.Data
		}
	}
	page, err := htmlpage.RenderStage(htmlpage.Stage{Summary: res.Summary, Log: log, Where: where, Mask: m.Mask})
	if err != nil {
		return res, err
	}
	res.Files = append(slices.Clone(res.Files), stagerun.ResultFile{Name: htmlpage.FileName, Data: string(page)})
	return res, nil
}

// FirstFailure names the file that failed a shard: its first file whose
// status is fail or timeout (a not-run file never started, so it is never
// the one), or the verdict when none has one.
func FirstFailure(s report.Summary) string {
	if t, ok := s.FirstFailed(); ok {
		return fmt.Sprintf("%s %s (%s)", t.File, t.Status, s.Verdict)
	}
	return string(s.Verdict)
}

// ShardFailure is a failed shard as the run's end shows it: the file that
// failed it, the last lines that file printed, and its folder.
type ShardFailure struct {
	// Title is the job's name ("pr-test/stage-a-cpu shard 2/4").
	Title string
	// File and Status are its first file that failed or timed out (""
	// when none did: the runner ended before a file had an outcome, or the
	// run was inconsistent, which Why says).
	File   string
	Status report.Status
	// Tail is the last lines the file printed (report.OutputTail); with
	// no File, the last lines of the shard's run.log.
	Tail []string
	// Why says why no file failed, when none did.
	Why string
	// Dir is the shard's folder under the results; its run.log is there.
	Dir string
	// Files are every file that failed or timed out, each with its last
	// lines, the first one included (report.html shows them all).
	Files []htmlpage.FailedFile
	// NotRun are the files the shard never started, and NotRunWhy why
	// (the run stopped after FILE failed); no tail is theirs.
	NotRun    []string
	NotRunWhy string
	// Skipped are the plan's disabled files, with their reasons.
	Skipped []policy.SkippedTest
}

// NewShardFailure is a failed job's failure, from its summary (nil when its
// folder has none) and its run.log.
func NewShardFailure(j cirun.JobReport, dir string, sum *report.Summary, log string) ShardFailure {
	f := ShardFailure{Title: j.Title(), Dir: dir}
	if sum != nil {
		for _, t := range sum.Tests {
			if t.Failed() {
				f.Files = append(f.Files, htmlpage.FailedFile{File: t.File, Status: t.Status, Tail: report.OutputTail(log, t.File, report.TailLines)})
			}
		}
		if f.NotRun = sum.NotRun(); len(f.NotRun) > 0 {
			f.NotRunWhy = sum.NotRunWhy()
		}
		f.Skipped = sum.Skipped
		f.Why = noFileFailed(*sum)
	}
	if len(f.Files) > 0 {
		f.File, f.Status, f.Tail, f.Why = f.Files[0].File, f.Files[0].Status, f.Files[0].Tail, ""
	} else if log != "" {
		f.Tail = report.OutputTail(log, "", report.TailLines)
	}
	return f
}

// noFileFailed says why a failed shard has no file that failed: an
// inconsistent run, or a runner that ended before any file had an outcome.
func noFileFailed(s report.Summary) string {
	switch {
	case s.Verdict == report.Inconsistent:
		return "no file failed; the run was inconsistent (its summary.json says how)"
	case s.Signal != nil:
		return fmt.Sprintf("no file failed or timed out; the runner was killed by signal %d", *s.Signal)
	}
	return fmt.Sprintf("no file failed or timed out; the runner exited with code %d", s.ExitCode)
}

// Page is a ci run's report.html (htmlpage.RenderCI), masked with m.
func Page(rep *cirun.Report, reuse string, fails []ShardFailure, m *report.Masker) (stagerun.ResultFile, error) {
	var pf []htmlpage.Failure
	for _, f := range fails {
		pf = append(pf, htmlpage.Failure{Title: f.Title, Dir: f.Dir, Files: f.Files, Why: f.Why, NotRun: f.NotRun, NotRunWhy: f.NotRunWhy, Skipped: f.Skipped})
	}
	page, err := htmlpage.RenderCI(htmlpage.CI{Report: rep, Reuse: reuse, Failures: pf, Mask: m.Mask})
	return stagerun.ResultFile{Name: htmlpage.FileName, Data: string(page)}, err
}
