package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/radixark/miles-ci/actions"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/internal/daggersdk"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/internal/runreq"
	"github.com/radixark/miles-ci/pipeline"
	"github.com/radixark/miles-ci/report"
)

func init() {
	register("run", "run one stage shard in its container on a Dagger engine, as CI does (rules §9)", runStage)
	register("file-run", "run one test file in its stage's container on a Dagger engine (/rerun-test, rules §10)", runFile)
}

// runFlags are the flags run and file-run share.
type runFlags struct {
	repo, prBody, sglang, megatron, imageTag, prNumber, headSHA *string
	gpus, visible, models, datasets, runID, results             *string
	fork, dryRun, asJSON, quiet                                 *bool
	gh                                                          *githubFlags
}

func addRunFlags(fs *flagSet) runFlags {
	return runFlags{
		repo:     fs.String("repo", "DIR", "the Miles checkout to run (default: the current folder)"),
		prBody:   fs.String("pr-body-file", "F", "file holding the pull request description, read for ci-sglang-pr, ci-megatron-pr and ci-image-tag (default: the text in $PR_BODY)"),
		sglang:   fs.String("sglang-input", "R", "workflow_dispatch input ci_sglang_pr", fromEnv("INPUT_SGLANG_PR")),
		megatron: fs.String("megatron-input", "R", "workflow_dispatch input ci_megatron_pr", fromEnv("INPUT_MEGATRON_PR")),
		imageTag: fs.String("image-tag", "T", "workflow_dispatch input ci_image_tag", fromEnv("INPUT_CI_IMAGE_TAG")),
		prNumber: fs.String("pr-number", "N", "the pull request number, for GITHUB_COMMIT_NAME (default: not a PR)"),
		headSHA:  fs.String("head-sha", "SHA", "the tested commit, for GITHUB_COMMIT_NAME (default: local)"),
		fork:     fs.Bool("fork", "the pull request comes from a fork: run without secrets"),
		gpus:     fs.String("gpus", "all|none|IDS", "GPUs the container gets (default all; none for an engine without GPU support)"),
		visible:  fs.String("visible-devices", "IDS", "CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES, e.g. 4,5 (the host's split of its GPUs)"),
		models:   fs.String("models", "DIR", "host folder mounted at /root/models (GPU stages)"),
		datasets: fs.String("datasets", "DIR", "host folder mounted at /root/datasets (GPU stages)"),
		runID:    fs.String("run-id", "ID", "run nonce: the same id reuses that run's results from the engine's cache (default: a new run)"),
		results:  fs.String("results", "DIR", "write the results folder here (summary.json, junit.xml, run.log, plan.txt, exit-code)"),
		dryRun:   fs.Bool("dry-run", "print the container spec (image, env, secret names, caches, steps) without an engine"),
		asJSON:   fs.Bool("json", "with --dry-run, print the spec as JSON"),
		quiet:    fs.Bool("quiet", "do not stream the engine's progress to stderr"),
		gh:       addGitHubFlags(fs),
	}
}

// inputs fills the run inputs the shared flags give, all but the PR's, and
// inside a GitHub Actions job the run's facts from its environment.
func (f runFlags) inputs(fs *flagSet) (runreq.Inputs, error) {
	gh, err := runreq.GitHubFromEnv(fs.env.Getenv)
	if err != nil {
		return runreq.Inputs{}, err
	}
	return runreq.Inputs{
		Repo:           *f.repo,
		SGLangInput:    *f.sglang,
		MegatronInput:  *f.megatron,
		ImageTag:       *f.imageTag,
		PRNumber:       *f.prNumber,
		HeadSHA:        *f.headSHA,
		Fork:           *f.fork,
		GPUs:           *f.gpus,
		VisibleDevices: *f.visible,
		Models:         *f.models != "",
		Datasets:       *f.datasets != "",
		GitHub:         gh,
		Given: runreq.Given{
			Body:    fs.Given("pr-body-file"),
			Cadence: fs.Given("cadence") || fs.Given("nightly"),
			Labels:  fs.Given("labels"),
			Number:  fs.Given("pr-number"),
			HeadSHA: fs.Given("head-sha"),
		},
	}, nil
}

// readPR adds the PR body to in: with --pr, the pull request (and its changed
// files when files is set), from which runreq fills what the command line
// leaves out; --pr-body-file, else $PR_BODY, otherwise.
func (f runFlags) readPR(fs *flagSet, in *runreq.Inputs, files bool) error {
	var err error
	if f.gh.active() {
		if in.PR, err = f.gh.fetch(fs.env, files); err != nil {
			return err
		}
		f.gh.note(fs.env, in.PR)
		if !in.Given.Body {
			return nil // the PR's body, not $PR_BODY
		}
	}
	in.PRBody, err = readBody(fs, *f.prBody)
	return err
}

func runStage(args []string, env Env) int {
	fs := newFlagSet("run", "--stage S [--shard I] [--repo DIR] [--cadence C | --nightly] [--labels L ...] [--match-all-labels]\n"+
		"    [--event E [--schedule CRON] [--pr-labels-json JSON]] [--release-lock FILE]\n"+
		"    [--pr N [--github-repo OWNER/NAME]] [--pr-body-file F] [--sglang-input R] [--megatron-input R] [--image-tag T]\n"+
		"    [--pr-number N] [--head-sha SHA] [--fork] [--gpus all|none|IDS] [--visible-devices IDS] [--models DIR] [--datasets DIR]\n"+
		"    [--run-id ID] [--results DIR] [--github-step-summary FILE] [--quiet] [--dry-run [--json]]", env)
	stage := fs.String("stage", "S", "stage (= suite) name, e.g. stage-c-4-gpu-h200 (see miles-ci stages)", required())
	shard := fs.Int("shard", "I", "0-based shard of a sharded stage", 0, maxShards-1)
	sf := addSuiteFlags(fs)
	event := fs.String("event", "E", "GitHub event whose trigger facts decide cadence and labels: pull_request, schedule or workflow_dispatch")
	schedule := fs.String("schedule", "CRON", "cron of a scheduled run (with --event schedule)")
	prLabels := fs.String("pr-labels-json", "JSON", "the PR's label names as a JSON array (with --event pull_request)")
	lockFile := fs.String("release-lock", "FILE", "run as release CI does: cadence release, refs and image from this release-lock.json")
	rf := addRunFlags(fs)
	// The pull request is the trigger: other trigger facts with it are a
	// usage error, found before GitHub is asked (runreq checks it again
	// for the module).
	fs.check(func() error {
		if !rf.gh.active() {
			return nil
		}
		for _, name := range []string{"event", "schedule", "pr-labels-json"} {
			if fs.Given(name) {
				return runreq.ConflictsWithPR("--" + name)
			}
		}
		if fs.Given("release-lock") {
			return runreq.ErrReleasePR
		}
		return nil
	})
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	if *sf.continueOnError {
		return fs.usageError("--continue-on-error: the workflows never pass it; add the bypass-fastfail label instead")
	}
	in, err := rf.inputs(fs)
	if err != nil {
		return fail(env, err)
	}
	in.Stage, in.Labels, in.MatchAllLabels = *stage, *sf.labels, *sf.matchAllLabels
	in.Event, in.Schedule, in.PRLabelsJSON = *event, *schedule, *prLabels
	if shard.Set {
		id := shard.Value
		in.Shard = &id
	}
	if fs.Given("cadence") || *sf.nightly {
		c, err := sf.resolveCadence(fs)
		if err != nil {
			return fs.usageError("%v", err)
		}
		in.Cadence = string(c)
	}
	if fs.Given("release-lock") {
		data, err := deps.ReadLockFile(*lockFile)
		if err != nil {
			return fail(env, fmt.Errorf("--release-lock %w", err))
		}
		lock, err := deps.ParseLock(*lockFile, data)
		if err != nil {
			return fail(env, err)
		}
		in.Release = &lock
	}
	if err := rf.readPR(fs, &in, true); err != nil {
		return fail(env, err)
	}
	req, err := runreq.Stage(in)
	if err != nil {
		return fail(env, err)
	}
	return execute(req, in, rf, env)
}

func runFile(args []string, env Env) int {
	fs := newFlagSet("file-run", "--file PATH [--repo DIR] [--pr N [--github-repo OWNER/NAME]] [--pr-body-file F]\n"+
		"    [--sglang-input R] [--megatron-input R] [--image-tag T] [--pr-number N] [--head-sha SHA] [--fork]\n"+
		"    [--gpus all|none|IDS] [--visible-devices IDS] [--models DIR] [--datasets DIR]\n"+
		"    [--run-id ID] [--results DIR] [--github-step-summary FILE] [--quiet] [--dry-run [--json]]", env)
	file := fs.String("file", "PATH", "the repo-relative test file, e.g. tests/e2e/precision/test_x.py", required(), fromEnv("TEST_FILE"))
	rf := addRunFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	in, err := rf.inputs(fs)
	if err != nil {
		return fail(env, err)
	}
	in.File = *file
	if err := rf.readPR(fs, &in, false); err != nil {
		return fail(env, err)
	}
	req, err := runreq.File(in)
	if err != nil {
		return fail(env, err)
	}
	return execute(req, in, rf, env)
}

// engineRun runs a request on a Dagger engine; tests replace it.
var engineRun = func(ctx context.Context, req pipeline.Request, host daggersdk.Inputs, nonce, results string, log io.Writer) (report.Summary, error) {
	s, err := daggersdk.Connect(ctx, host, log)
	if err != nil {
		return report.Summary{}, err
	}
	defer s.Close()
	p, spec, err := pipeline.Prepare(ctx, s.Container(), req, nonce)
	if err != nil {
		return report.Summary{}, err
	}
	res, err := pipeline.Test(ctx, p, spec, nonce)
	if err != nil {
		return report.Summary{}, err
	}
	if results != "" {
		if err := daggersdk.ExportResults(ctx, res.Container, results); err != nil {
			return res.Summary, fmt.Errorf("writing the results to %s: %w", results, err)
		}
	}
	return res.Summary, nil
}

// execute prints the spec (--dry-run) or runs it and exits like the suite.
func execute(req pipeline.Request, in runreq.Inputs, rf runFlags, env Env) int {
	if *rf.asJSON && !*rf.dryRun {
		return fail(env, fmt.Errorf("--json goes with --dry-run; a run writes JSON to --results DIR/summary.json"))
	}
	if *rf.dryRun {
		spec, err := pipeline.Build(req)
		if err != nil {
			return fail(env, err)
		}
		warnRequest(env, req)
		if *rf.asJSON {
			out, err := encode.JSON(spec)
			if err != nil {
				return fail(env, err)
			}
			env.Stdout.Write(out)
			return 0
		}
		io.WriteString(env.Stdout, spec.Text())
		return 0
	}
	host := daggersdk.Inputs{Repo: in.Repo, Secrets: map[string]string{}, Models: *rf.models, Datasets: *rf.datasets}
	if host.Repo == "" {
		host.Repo = "."
	}
	// A fork PR's run gets no secrets: they are not even read, so no
	// container of it can be handed one.
	for _, name := range []string{pipeline.SecretWandb, pipeline.SecretNeon, pipeline.SecretHF} {
		if v := env.Getenv(name); v != "" && !req.Fork {
			host.Secrets[name] = v
		}
	}
	nonce := *rf.runID
	if nonce == "" {
		nonce = strconv.FormatInt(time.Now().UnixNano(), 10)
	}
	var log io.Writer = env.Stderr
	if *rf.quiet {
		log = nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	warnRequest(env, req)
	summary, err := engineRun(ctx, req, host, nonce, *rf.results, log)
	if err != nil {
		return fail(env, err)
	}
	if err := writeResultsSummary(env, rf.gh, summary); err != nil {
		return fail(env, err)
	}
	io.WriteString(env.Stdout, summary.Text())
	if *rf.results != "" {
		fmt.Fprintf(env.Stdout, "results: %s\n", *rf.results)
	}
	if summary.Passed {
		return 0
	}
	if summary.ExitCode > 0 && summary.ExitCode < 256 {
		return summary.ExitCode
	}
	return 1
}

// warnRequest prints what the request's decisions found: the dependency
// warnings and its notes (e.g. that CI skips the stage on the PR).
func warnRequest(env Env, req pipeline.Request) {
	for _, w := range req.Deps.Warnings {
		warn(env, w)
	}
	for _, n := range req.Notes {
		warn(env, n)
	}
}

// writeResultsSummary appends the run's results table to
// --github-step-summary (or $GITHUB_STEP_SUMMARY), as `miles-ci report`
// renders a results folder's summary.json.
func writeResultsSummary(env Env, gh *githubFlags, summary report.Summary) error {
	return gh.writeSummary(env, actions.ResultsMarkdown(&summary))
}
