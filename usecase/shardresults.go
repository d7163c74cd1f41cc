package usecase

import (
	"context"
	"fmt"
	"slices"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/report/htmlpage"
	"github.com/radixark/miles-ci/stagerun"
)

// PrepareAndTest prepares and runs one request's container
// (stagerun.Prepare, then stagerun.Test): EngineShards.Run's default, and
// each attempt of a triage.
func PrepareAndTest(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
	p, spec, err := stagerun.Prepare(ctx, c, req, nonce)
	if err != nil {
		return stagerun.Result{}, spec, err
	}
	res, err := stagerun.Test(ctx, p, spec, nonce, m)
	if err != nil {
		return res, spec, err
	}
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

// FirstFailure names the first failing file of a shard.
func FirstFailure(s report.Summary) string {
	for _, t := range s.Tests {
		if t.Status != report.Pass {
			return fmt.Sprintf("%s %s (%s)", t.File, t.Status, s.Verdict)
		}
	}
	return string(s.Verdict)
}

// ShardFailure is a failed shard as the run's end shows it: its first
// failing file, the last lines that file printed, and its folder.
type ShardFailure struct {
	// Title is the job's name ("pr-test/stage-a-cpu shard 2/4").
	Title string
	// File and Status are its first file that did not pass ("" when the
	// shard failed with every file passed: an inconsistent run).
	File   string
	Status report.Status
	// Tail is the last lines the file printed (report.OutputTail).
	Tail []string
	// Dir is the shard's folder under the results; its run.log is there.
	Dir string
	// Files are every file that did not pass with its last lines, the
	// first one included (report.html shows them all).
	Files []htmlpage.FailedFile
}

// NewShardFailure is a failed job's failure, from its summary (nil when its
// folder has none) and its run.log.
func NewShardFailure(j cirun.JobReport, dir string, sum *report.Summary, log string) ShardFailure {
	f := ShardFailure{Title: j.Title(), Dir: dir}
	if sum != nil {
		for _, t := range sum.Tests {
			if t.Status != report.Pass {
				f.Files = append(f.Files, htmlpage.FailedFile{File: t.File, Status: t.Status, Tail: report.OutputTail(log, t.File, report.TailLines)})
			}
		}
	}
	if len(f.Files) > 0 {
		f.File, f.Status, f.Tail = f.Files[0].File, f.Files[0].Status, f.Files[0].Tail
	} else if log != "" {
		f.Tail = report.OutputTail(log, "", report.TailLines)
	}
	return f
}

// Page is a ci run's report.html (htmlpage.RenderCI), masked with m.
func Page(rep *cirun.Report, reuse string, fails []ShardFailure, m *report.Masker) (stagerun.ResultFile, error) {
	var pf []htmlpage.Failure
	for _, f := range fails {
		pf = append(pf, htmlpage.Failure{Title: f.Title, Dir: f.Dir, Files: f.Files})
	}
	page, err := htmlpage.RenderCI(htmlpage.CI{Report: rep, Reuse: reuse, Failures: pf, Mask: m.Mask})
	return stagerun.ResultFile{Name: htmlpage.FileName, Data: string(page)}, err
}
