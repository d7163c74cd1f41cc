package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/internal/resultsdir"
	"github.com/radixark/miles-ci/internal/typedjson"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/triage"
	"github.com/radixark/miles-ci/usecase"
)

// Triage says whether failing test files are a regression, pre-existing, flaky or not reproduced.
//
// It runs each file K times at the head (the constructor's source) and,
// where the head fails every time, K times at the merge base, in the same
// image with the same resolved refs and GPUs (`miles-ci triage`).
// +cache="never"
func (m *MilesCi) Triage(
	ctx context.Context,
	// The repo-relative test files, e.g. tests/fast/test_x.py.
	file []string,
	// The merge base's checkout: a folder, or a git ref such as
	// https://github.com/radixark/miles#<merge-base commit>.
	base *dagger.Directory,
	// The merge base's commit, for the verdict table and the attempts' ids
	// (default: the digest of base).
	// +optional
	baseSha string,
	// Runs per side (default 3, at most 10).
	// +optional
	attempts int,
	// Bound on the whole triage, e.g. 2h (default: none; each file's
	// attempts stay within its stage's timeout).
	// +optional
	budget string,
) (*TriageRun, error) {
	var within time.Duration
	if budget != "" {
		d, err := time.ParseDuration(budget)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--budget %q is not a duration; give e.g. 2h or 45m", budget)
		}
		within = d
	}
	pr, err := m.pullRequest(ctx, false)
	if err != nil {
		return nil, err
	}
	head, err := usecase.CommitOf(ctx, sourceDigest{m.Source}, m.HeadSha, "")
	if err != nil {
		return nil, err
	}
	if baseSha == "" {
		if baseSha, err = base.Digest(ctx); err != nil {
			return nil, fmt.Errorf("the base's digest: %w", err)
		}
	}
	return withCheckout(ctx, m.Source, func(dir string) (*TriageRun, error) {
		return withCheckout(ctx, base, func(baseDir string) (*TriageRun, error) {
			in, err := m.inputs(ctx, dir, pr)
			if err != nil {
				return nil, err
			}
			req := usecase.TriageRequest{Head: in, BaseRepo: baseDir, HeadCommit: head, BaseCommit: baseSha, Files: file, Attempts: attempts,
				Budget: within, Session: time.Now().UTC().Format("20060102T150405Z")}
			headS, err := m.newSession(ctx, req.FromFork())
			if err != nil {
				return nil, err
			}
			defer headS.close()
			onBase := *m
			onBase.Source = base
			baseS, err := onBase.newSession(ctx, req.FromFork())
			if err != nil {
				return nil, err
			}
			defer baseS.close()
			masker, err := headS.masker(ctx)
			if err != nil {
				return nil, err
			}
			req.Runner = moduleTriage{sessions: map[string]*session{dir: headS, baseDir: baseS}, head: headS, m: masker}
			req.Notify = func(f string, a triage.Attempt) {
				progress(fmt.Sprintf("miles-ci: triage %s %s #%d %s (%.1fs)\n", printable.Line(f), a.Side, a.N, a.Outcome, a.DurationS))
			}
			ans, err := usecase.Triage(ctx, req)
			if err != nil {
				return nil, errors.New(masker.Mask(err.Error()))
			}
			js, err := encode.JSON(ans)
			if err != nil {
				return nil, err
			}
			results := dag.Directory().WithNewFile(resultsdir.Marker, resultsdir.MarkerText)
			files, err := ans.ResultFiles(masker.Mask(ans.Markdown()), []byte(masker.Mask(string(js))), masker)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				results = results.WithNewFile(f.Name, f.Data)
			}
			masked := masker.Mask(string(js))
			run := &TriageRun{}
			err = typedjson.Fill(run, []byte(masked), map[string]any{"ExitCode": ans.ExitStatus(),
				"Verdicts": ghoutput.Plain(masker.Mask(ans.Text())), "Json": masked, "Results": results})
			return run, err
		})
	})
}

// TriageRun is a finished triage.
// Its session, commits and files are triage.json's fields, typed.
type TriageRun struct {
	// The triage's session, the name of its attempts' run ids.
	Session string
	// The head's commit.
	HeadCommit string
	// The merge base's commit.
	BaseCommit string
	// Each file's verdict, counts and attempts.
	Files []*TriageFile
	// 0, or 1 when a file is a regression, 125 when one is inconclusive.
	ExitCode int
	// The verdict table: each file's verdict and counts, each attempt's outcome, duration and run.log.
	Verdicts string
	// The verdicts and attempts as JSON (triage.json).
	Json string
	// Each attempt's results (FILE/SIDE-N/run.log, ...), triage.json and step-summary.md.
	Results *dagger.Directory
}

// moduleTriage runs the attempts on this engine: the head's on the
// constructor's source, the base's on the base directory.
type moduleTriage struct {
	sessions map[string]*session
	head     *session
	m        *report.Masker
}

func (t moduleTriage) Resolve(ctx context.Context, req stagerun.Request, nonce string) (stagerun.Request, error) {
	return stagerun.Resolve(ctx, t.head.container(), req, nonce)
}

func (t moduleTriage) Run(ctx context.Context, repo string, req stagerun.Request, nonce string) (stagerun.Result, error) {
	s, ok := t.sessions[repo]
	if !ok {
		return stagerun.Result{}, fmt.Errorf("no checkout at %s", repo)
	}
	res, _, err := usecase.PrepareAndTest(ctx, s.container(), req, nonce, t.m)
	return res, err
}
