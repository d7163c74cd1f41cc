package main

import (
	"context"
	"errors"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/graph"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/usecase"
)

// Ci returns the whole CI of one event as the checkout's PR workflows run it
// (rules §12): every job and shard with its state, the reason it is skipped,
// its GPUs, needs and tests, as JSON (`miles-ci ci --dry-run --json`, the
// same use-case call), text or Mermaid. The trigger facts are policy's; with
// with-pr the pull request gives them; a --release-lock runs release CI.
// +cache="session"
func (m *MilesCi) Ci(
	ctx context.Context,
	// GitHub event: pull_request, schedule or workflow_dispatch (with
	// --release-lock: release CI's workflow_dispatch of release-branch-cut.yml).
	// +optional
	event Event,
	// Cron expression of a scheduled run.
	// +optional
	schedule string,
	// The PR's label names as a JSON array, e.g. ["run-ci-megatron"].
	// +optional
	prLabelsJson string,
	// The pull_request activity type (default synchronize; closed runs nothing).
	// +optional
	action string,
	// Output of `git diff --name-status -z -M HEAD^1 HEAD` for a pull request.
	// +optional
	changedFiles *dagger.File,
	// The release branch's release-lock.json: run release CI (cadence release, its image).
	// +optional
	releaseLock *dagger.File,
	// Only these stages or backends (cpu, cuda, rocm).
	// +optional
	only []string,
	// Leave out these stages or backends.
	// +optional
	skip []string,
	// Who plans: miles-ci (the default) or checkout (the checkout's own tests/ci code).
	// +optional
	planner Planner,
	// Output format: json (default), text or mermaid.
	// +optional
	// +default="json"
	format string,
) (string, error) {
	who := plannerOf(planner)
	if format != "json" && format != "text" && format != "mermaid" {
		return "", errors.New("--format must be json, text or mermaid")
	}
	gpus := m.Gpus
	if gpus == "" {
		gpus = "all"
	}
	host, err := graph.ParseHost(gpus, func() (int, error) {
		return 0, errors.New("the module cannot count the host's GPUs; give the constructor --gpus 0-7 (or none for stand-ins)")
	})
	if err != nil {
		return "", err
	}
	req := usecase.CIRequest{Event: string(event), Action: action, Schedule: schedule, PRLabelsJSON: prLabelsJson, Fork: m.Fork,
		ImageTag: m.ImageTag, SGLangInput: m.SglangPr, MegatronInput: m.MegatronPr, Host: host, Only: only, Skip: skip,
		Given: usecase.Given{Body: m.PrBodyFile != nil, Number: m.PrNumber != 0, Diff: changedFiles != nil}, PRNumber: m.PrNumber}
	if releaseLock != nil {
		data, err := readFile(ctx, releaseLock, fsinput.Lockfile, "--release-lock")
		if err != nil {
			return "", err
		}
		lock, err := deps.ParseLock("--release-lock", []byte(data))
		if err != nil {
			return "", err
		}
		req.Release, req.Event = &lock, graph.EventRelease
	}
	if req.PR, err = m.pullRequestOf(ctx, !req.Given.Diff); err != nil {
		return "", err
	}
	if m.PrBodyFile != nil {
		if req.PRBody, err = readFile(ctx, m.PrBodyFile, fsinput.PRBody, "with-pull-request --body-file"); err != nil {
			return "", err
		}
	}
	return withCheckout(ctx, m.Source, func(dir string) (string, error) {
		req.Repo = dir
		if changedFiles != nil {
			req.ReadDiff = func() ([]byte, string, error) { return readChangedFiles(ctx, changedFiles, dir+".changed-files") }
		}
		if who == usecase.PlannerCheckout {
			if req.Checkout, err = checkout(dir, m.Source); err != nil {
				return "", err
			}
		}
		ans, err := usecase.CI(ctx, req)
		if err != nil {
			return "", err
		}
		printMessages(ans.Messages)
		switch format {
		case "text":
			return ans.Report.Text(), nil
		case "mermaid":
			return ans.Report.Mermaid(ans.Graph), nil
		}
		return jsonString(ans.Report)
	})
}
