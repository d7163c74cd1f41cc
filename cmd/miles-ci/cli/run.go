package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/gitrepo"
	"github.com/radixark/miles-ci/hostgpu/detect"
	"github.com/radixark/miles-ci/hostlock"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/usecase/runhistory"
)

func init() {
	register("run", "run one stage shard in its container on a Dagger engine, as CI does (rules §9)", runStage)
	register("file-run", "run one test file in its stage's container on a Dagger engine (/rerun-test, rules §10)", runFile)
}

// runFlags are the flags run and file-run share.
type runFlags struct {
	repo, prBody, sglang, megatron, imageTag, prNumber, headSHA *string
	gpus, visible, models, datasets, runID, results, engineLog  *string
	lockDir                                                     *string
	cacheRegistry                                               *string
	// gateDB is --gate-db (run only: a single file is not gated).
	gateDB                                *string
	fork, dryRun, asJSON, quiet, progress *bool
	timeout                               *optInt
	gh                                    *githubFlags
	rec                                   recordFlags
	fs                                    *flagSet
}

func addRunFlags(fs *flagSet) runFlags {
	f := runFlags{
		repo:      fs.String("repo", "DIR", "the Miles checkout to run (default: the current folder)"),
		prBody:    fs.String("pr-body-file", "F", "file holding the pull request description, read for ci-sglang-pr, ci-megatron-pr and ci-image-tag (default: the text in $PR_BODY)"),
		sglang:    fs.String("sglang-input", "R", "workflow_dispatch input ci_sglang_pr", fromEnv("INPUT_SGLANG_PR")),
		megatron:  fs.String("megatron-input", "R", "workflow_dispatch input ci_megatron_pr", fromEnv("INPUT_MEGATRON_PR")),
		imageTag:  fs.String("image-tag", "T", "workflow_dispatch input ci_image_tag", fromEnv("INPUT_CI_IMAGE_TAG")),
		prNumber:  fs.String("pr-number", "N", "the pull request number, for GITHUB_COMMIT_NAME (default: not a PR)"),
		headSHA:   fs.String("head-sha", "SHA", "the tested commit, for GITHUB_COMMIT_NAME (default: local)"),
		fork:      fs.Bool("fork", "the pull request comes from a fork: run without secrets"),
		gpus:      fs.String("gpus", "all|none|IDS", "GPUs the container gets (default all; none for an engine without GPU support)"),
		visible:   fs.String("visible-devices", "IDS", "CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES, e.g. 4,5 (the host's split of its GPUs)"),
		models:    fs.String("models", "DIR", "host folder mounted at /root/models (GPU stages)"),
		datasets:  fs.String("datasets", "DIR", "host folder mounted at /root/datasets (GPU stages)"),
		runID:     fs.String("run-id", "ID", "run nonce: the same id reuses that run's results from the engine's cache (default: a new run)"),
		results:   fs.String("results", "DIR", "replace the folder DIR with the run's results (summary.json, junit.xml, run.log, plan.txt, status.log, exit-code, elapsed, step-summary.md, artifacts/; default: a new folder ./miles-ci-results/STAGE[-N-of-M]-YYYYMMDD-HHMMSS, or file-NAME-... for file-run)"),
		dryRun:    fs.Bool("dry-run", "print the container spec (image, env, secret names, caches, steps) without an engine"),
		asJSON:    fs.Bool("json", "with --dry-run, print the spec as JSON"),
		quiet:     fs.Bool("quiet", "keep no log of the engine's progress"),
		progress:  fs.Bool("progress", "stream the engine's progress to stderr (default: to a log file, named on stderr)"),
		engineLog: fs.String("engine-log", "FILE", "write the engine's progress to FILE (default: a new file in the temporary folder)"),
		lockDir:   fs.String("lock-dir", "DIR", "the host lock's folder: the run holds its GPUs in one lock file each, which every process on the host honours (default /dev/shm/miles-ci-gpus, the same for every user)", fromEnv("MILES_CI_LOCK_DIR")),
		timeout:   fs.Int("timeout-minutes", "N", "end the run as a TIMEOUT after N minutes (default: the stage job's: 60 for CPU stages, 360 for GPU stages; a single file has its own)", usecase.MinTimeoutMinutes, usecase.MaxTimeoutMinutes),
		gh:        addGitHubFlags(fs),
		rec:       addRecordFlags(fs),
		fs:        fs,
	}
	f.cacheRegistry = fs.String("cache-registry", "REF", "share the prepared dependency layers across hosts through the registry repository REF (e.g. 127.0.0.1:5000/miles-ci/layers): pulled by digest when a holder of the secret MILES_CI_CACHE_KEY published them with their proof, else built and published")
	return f
}

// inputs fills the run inputs the shared flags give, all but the PR's, and
// inside a GitHub Actions job the run's facts from its environment.
func (f runFlags) inputs(fs *flagSet) (usecase.Inputs, error) {
	gh, err := usecase.GitHubFromEnv(fs.env.Getenv)
	if err != nil {
		return usecase.Inputs{}, err
	}
	return usecase.Inputs{
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
		CacheRegistry:  *f.cacheRegistry,
		Given: usecase.Given{
			Body:    fs.Given("pr-body-file"),
			Cadence: fs.Given("cadence") || fs.Given("nightly"),
			Labels:  fs.Given("labels"),
			Number:  fs.Given("pr-number"),
			HeadSHA: fs.Given("head-sha"),
		},
	}, nil
}

// readPR adds the PR body to in: with --pr, the pull request (and its changed
// files when files is set), from which usecase fills what the command line
// leaves out; --pr-body-file, else $PR_BODY, otherwise.
func (f runFlags) readPR(fs *flagSet, in *usecase.Inputs, files bool) error {
	var err error
	if f.gh.active() {
		if in.PR, err = f.gh.fetch(fs.env, files); err != nil {
			return err
		}
		if err := f.gh.noteAndCheck(fs.env, in.Repo, in.PR); err != nil {
			return err
		}
		if !in.Given.Body {
			return nil // the PR's body, not $PR_BODY
		}
	}
	in.PRBody, err = readBody(fs, *f.prBody)
	return err
}

func runStage(args []string, env Env) int {
	fs := newFlagSet("run", "--stage S [--shard N] [--repo DIR] [--cadence C | --nightly] [--labels L ...] [--match-all-labels]\n"+
		"    [--event E [--schedule CRON] [--pr-labels-json JSON]] [--release-lock FILE]\n"+
		"    [--pr N [--github-repo OWNER/NAME]] [--pr-body-file F] [--sglang-input R] [--megatron-input R] [--image-tag T]\n"+
		"    [--pr-number N] [--head-sha SHA] [--fork] [--gpus all|none|IDS] [--visible-devices IDS] [--models DIR] [--datasets DIR]\n"+
		"    [--run-id ID] [--timeout-minutes N] [--cache-registry REF] [--results DIR] [--gate-db URL|PATH] [--github-step-summary FILE] [--progress | --quiet | --engine-log FILE] [--dry-run [--json]]\n"+
		"--stage JOB --batch N [the flags above but --shard and --results]", env)
	stage := fs.String("stage", "S", "stage (= suite) name, e.g. stage-c-4-gpu-h200 (see miles-ci stages)", required())
	shard := fs.Int("shard", "N", "the shard of a sharded stage as every output numbers it, 1 to its count: --shard 2 is shard 2/4 (Miles' --auto-partition-id 1)", 1, maxShards)
	batch := fs.Int("batch", "N", "1-based batch of the B200 pool job (e.g. --stage stage-c-b200; see miles-ci plan --pool): each of its files runs alone with its own GPU count", 1, policy.PoolMaxJobs)
	sf := addRunSuiteFlags(fs)
	event := fs.String("event", "E", "GitHub event whose trigger facts decide cadence and labels: pull_request, schedule or workflow_dispatch")
	schedule := fs.String("schedule", "CRON", "cron of a scheduled run (with --event schedule)")
	prLabels := fs.String("pr-labels-json", "JSON", "the PR's label names as a JSON array (with --event pull_request)")
	lockFile := fs.String("release-lock", "FILE", "run as release CI does: cadence release, refs and image from this release-lock.json")
	rf := addRunFlags(fs)
	rf.gateDB = gateDBFlag(fs)
	// The pull request is the trigger: other trigger facts with it are a
	// usage error, found before GitHub is asked (usecase checks it again
	// for the module).
	fs.check(func() error {
		if !rf.gh.active() {
			return nil
		}
		for _, name := range []string{"event", "schedule", "pr-labels-json"} {
			if fs.Given(name) {
				return usecase.ConflictsWithPR("--" + name)
			}
		}
		if fs.Given("release-lock") {
			return usecase.ErrReleasePR
		}
		return nil
	})
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	in, err := rf.inputs(fs)
	if err != nil {
		return fail(env, err)
	}
	in.Stage, in.Labels, in.MatchAllLabels = *stage, *sf.labels, *sf.matchAllLabels
	in.Event, in.Schedule, in.PRLabelsJSON = *event, *schedule, *prLabels
	if shard.Set {
		n := shard.Value
		in.Shard = &n
	}
	if rf.timeout.Set {
		in.TimeoutMinutes = rf.timeout.Value
	}
	if fs.Given("cadence") || *sf.nightly {
		c, err := sf.resolveCadence(fs)
		if err != nil {
			return fs.usageError("%v", err)
		}
		in.Cadence = string(c)
	}
	if fs.Given("release-lock") {
		lock, err := usecase.ReleaseLock(usecase.ReleaseLockRequest{Path: *lockFile})
		if err != nil {
			return fail(env, err)
		}
		in.Release = lock
	}
	if err := rf.readPR(fs, &in, true); err != nil {
		return fail(env, err)
	}
	if batch.Set {
		return runBatch(fs, env, in, rf, batch.Value)
	}
	req, err := usecase.Stage(in)
	if err != nil {
		return fail(env, err)
	}
	return execute(req, in, rf, env)
}

func runFile(args []string, env Env) int {
	fs := newFlagSet("file-run", "--file PATH [--repo DIR] [--pr N [--github-repo OWNER/NAME]] [--pr-body-file F]\n"+
		"    [--sglang-input R] [--megatron-input R] [--image-tag T] [--pr-number N] [--head-sha SHA] [--fork]\n"+
		"    [--gpus all|none|IDS] [--visible-devices IDS] [--models DIR] [--datasets DIR]\n"+
		"    [--run-id ID] [--cache-registry REF] [--results DIR] [--github-step-summary FILE] [--progress | --quiet | --engine-log FILE] [--dry-run [--json]]", env)
	file := fs.String("file", "PATH", "the repo-relative test file, e.g. tests/e2e/precision/test_x.py", required(), fromEnv("TEST_FILE"))
	rf := addRunFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	if rf.timeout.Set {
		return fs.usageError("--timeout-minutes: a single file runs under its own timeout, max(1800, est_time x 1.25) s (rules §10)")
	}
	in, err := rf.inputs(fs)
	if err != nil {
		return fail(env, err)
	}
	in.File = *file
	if err := rf.readPR(fs, &in, false); err != nil {
		return fail(env, err)
	}
	req, err := usecase.File(in)
	if err != nil {
		return fail(env, err)
	}
	return execute(req, in, rf, env)
}

// addRunSuiteFlags are plan's suite flags without --continue-on-error,
// which no workflow passes to a run (the bypass-fastfail label does that).
func addRunSuiteFlags(fs *flagSet) suiteFlags {
	names := make([]string, 0, len(policy.Cadences))
	for _, c := range []policy.Cadence{policy.Regular, policy.Nightly, policy.Weekly, policy.Release} {
		names = append(names, string(c))
	}
	off := false
	return suiteFlags{
		cadence:         fs.String("cadence", "C", "CI cadence (default regular)", oneOf(names...)),
		nightly:         fs.Bool("nightly", "the same as --cadence nightly"),
		labels:          fs.List("labels", "LABEL", "raw PR labels, e.g. run-ci-megatron run-ci-fsdp (zero or more)"),
		matchAllLabels:  fs.Bool("match-all-labels", "include every known label, as a manual dispatch of a GPU stage does"),
		continueOnError: &off,
	}
}

// engineRun runs a request on a Dagger engine; tests replace it. Every
// error it returns means the suite could not be run or read.
var engineRun = func(ctx context.Context, req stagerun.Request, host engine.Inputs, nonce string, log io.Writer, m *report.Masker, say func(string)) (stagerun.Result, error) {
	s, err := engine.Connect(ctx, host, log)
	if err != nil {
		return stagerun.Result{}, err
	}
	defer s.Close()
	say("resolving the dependency refs and building the container (cached layers are reused)")
	p, spec, err := stagerun.Prepare(ctx, s.Container(), req, nonce)
	if err != nil {
		return stagerun.Result{}, err
	}
	say(fmt.Sprintf("container of %s ready; planning and running the tests (timeout %d s)", spec.Image, spec.TimeoutS))
	return stagerun.Test(ctx, p, spec, nonce, m)
}

// execute prints the spec (--dry-run) or runs it and exits like the suite:
// 0 when it passed, the runner's own exit status when tests failed,
// report.ExitTimeout or report.ExitInconsistent, and report.ExitCannotRun
// when miles-ci could not run or read the suite.
func execute(req stagerun.Request, in usecase.Inputs, rf runFlags, env Env) int {
	if *rf.asJSON && !*rf.dryRun {
		return fail(env, fmt.Errorf("--json goes with --dry-run; a run writes JSON to --results DIR/summary.json"))
	}
	if *rf.dryRun {
		spec, err := stagerun.Build(req)
		if err != nil {
			return fail(env, err)
		}
		warnRequest(env, req)
		if *rf.asJSON {
			out, err := encode.JSON(spec)
			if err != nil {
				return fail(env, err)
			}
			writeJSON(env.Stdout, out)
			return 0
		}
		io.WriteString(env.Stdout, ghoutput.Plain(spec.Text()))
		return 0
	}
	host := engine.Inputs{Repo: in.Repo, Secrets: stagerun.HandedSecrets(req.Fork, env.secret), Models: *rf.models, Datasets: *rf.datasets}
	if host.Repo == "" {
		host.Repo = "."
	}
	// Everything that can be refused is refused before the engine is asked.
	key, masked, err := cacheKey(env, req.CacheRegistry, host.Secrets)
	if err != nil {
		return fail(env, err)
	}
	req.CacheKey = key
	m, err := report.NewMasker(masked)
	if err != nil {
		return fail(env, err)
	}
	if *rf.results == "" {
		// Every run keeps its results: a new folder when none is named.
		dir, err := defaultResults(env, runResultsName(req), time.Now())
		if err != nil {
			return fail(env, err)
		}
		*rf.results = dir
	}
	fmt.Fprintf(env.Stderr, "miles-ci: the results go to %s\n", *rf.results)
	if err := checkResultsDir(*rf.results, host.Repo); err != nil {
		return fail(env, err)
	}
	if err := rf.gh.checkSummary(env); err != nil {
		return fail(env, err)
	}
	if err := checkHistoryApart(rf.fs, rf.rec, env, *rf.results); err != nil {
		return fail(env, err)
	}
	gateDB := ""
	if rf.gateDB != nil {
		gateDB = *rf.gateDB
		if err := checkGateDB(rf.fs, env, gateDB, host.Secrets); err != nil {
			return fail(env, err)
		}
	}
	unlock, err := lockResults(*rf.results)
	if err != nil {
		return fail(env, err)
	}
	defer unlock()
	nonce := *rf.runID
	if nonce == "" {
		nonce = strconv.FormatInt(time.Now().UnixNano(), 10)
	}
	log, logPath, closeLog, err := engineLogFile(env, rf, m)
	if err != nil {
		return fail(env, err)
	}
	defer closeLog()
	ctx, stop := signalContext(env)
	defer stop()
	warnRequest(env, req)
	start := time.Now()
	say := func(line string) {
		fmt.Fprintf(env.Stderr, "miles-ci: [%3.0fs] %s\n", time.Since(start).Seconds(), line)
	}
	if h, devs := usecase.RunDevices(req, detect.Here); len(devs) > 0 {
		release, err := hostlock.Lease(ctx, hostlock.New(lockDirOr(*rf.lockDir), os.Args), h, devs,
			func(h cirun.Held) {
				say(ghoutput.Plain("waiting for GPUs " + h.Devices.String() + ", held by " + h.By))
			})
		if err != nil && ctx.Err() != nil {
			// The user stopped the wait (SIGINT or SIGTERM): interrupted, as
			// a run stopped later is, not a run that could not happen.
			annotate(env, "error", "interrupted (SIGINT or SIGTERM): "+err.Error())
			return ExitInterrupted
		}
		if err != nil {
			annotate(env, "error", err.Error())
			return report.ExitCannotRun
		}
		defer release()
	}
	res, err := engineRun(ctx, req, host, nonce, log, m, say)
	if err != nil && ctx.Err() != nil {
		// Not a run that could not happen: the user stopped it.
		annotate(env, "error", "interrupted (SIGINT or SIGTERM): miles-ci stopped the run; nothing of it was read")
		return ExitInterrupted
	}
	gate := openGate(ctx, env, gateDB, host.Repo)
	defer gate.Close()
	if err == nil {
		res = usecase.WithGate(ctx, res, req, gate.Judge, m)
		res, err = usecase.WithPage(res, req, m)
	}
	if err != nil {
		annotate(env, "error", m.Mask(err.Error()))
		pointAtEngineLog(env, logPath)
		return report.ExitCannotRun
	}
	say("the run ended: " + string(res.Summary.Verdict))
	if res.Layers.Refused != "" {
		warn(env, "--cache-registry: "+res.Layers.Refused+" names an image that no proof binds to its content key, so it was not used: the dependency layers were built here (the notes of summary.json say more)")
	}
	commit, _ := usecase.CommitOf(ctx, gitrepo.Local{}, in.HeadSHA, host.Repo)
	return finish(env, ending{
		verdict: func() { io.WriteString(env.Stdout, m.Mask(res.Summary.Text())) },
		exit:    res.Summary.ExitStatus(), gh: rf.gh, stepSummary: m.Mask(ghoutput.ResultsMarkdown(&res.Summary)),
		record: func() []stagerun.ResultFile {
			return recordRun(ctx, rf.fs, rf.rec, env, runhistory.RecordRequest{Summary: res.Summary, Repo: host.Repo}, commit, nonce, *rf.results)
		},
		recording: rf.fs != nil && recording(rf.rec, env),
		dir:       *rf.results, checkout: host.Repo, files: res.Files, depth: 1, mask: m.Mask,
		written: func() { io.WriteString(env.Stdout, "results: "+*rf.results+"\n") },
		last:    func() { storeGate(ctx, env, gate, []report.Summary{res.Summary}) },
	})
}

// ExitInterrupted is the exit status of a run stopped by SIGINT (128+2, as
// a shell gives it), told apart from report.ExitCannotRun.
const ExitInterrupted = 130

// engineLog is where the engine's progress goes: stderr with --progress,
// nowhere with --quiet, else a file (--engine-log, or a new one in the
// temporary folder) named once on stderr, so a run prints miles-ci's own
// lines and not hundreds of the engine's.
func engineLog(env Env, rf runFlags, m *report.Masker) (io.Writer, func(), error) {
	w, _, closeLog, err := engineLogFile(env, rf, m)
	return w, closeLog, err
}

// engineLogFile is engineLog, and the log file's path ("" with --progress
// or --quiet), for a run that fails for a reason its results do not hold.
func engineLogFile(env Env, rf runFlags, m *report.Masker) (io.Writer, string, func(), error) {
	// The engine's progress shows what the run's commands print and the
	// paths miles-ci reads: every secret value given is masked in it too.
	switch {
	case *rf.progress:
		w := report.NewMaskingWriter(ghoutput.PlainWriter{W: env.Stderr}, m)
		return w, "", func() { w.Flush() }, nil
	case *rf.quiet:
		return nil, "", func() {}, nil
	}
	var f *os.File
	var err error
	if *rf.engineLog != "" {
		f, err = os.OpenFile(*rf.engineLog, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	} else {
		f, err = os.CreateTemp("", "miles-ci-engine-*.log")
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("--engine-log: %w; give a file miles-ci can write, or --progress", err)
	}
	fmt.Fprintf(env.Stderr, "miles-ci: running on the Dagger engine; its progress goes to %s (--progress shows it here)\n", f.Name())
	w := report.NewMaskingWriter(f, m)
	return w, f.Name(), func() { w.Flush(); f.Close() }, nil
}

// pointAtEngineLog names the engine's log after a run that failed for a
// reason its results do not hold (the engine or the checkout refused it).
func pointAtEngineLog(env Env, path string) {
	if path != "" {
		fmt.Fprintf(env.Stderr, "miles-ci: the run could not run everything; the engine's log may say why: %s\n", path)
	}
}

// resultsRoot is the folder, under the current one, where a run given no
// --results keeps its results (a variable for the tests).
var resultsRoot = "miles-ci-results"

// defaultResults is a new folder under ./miles-ci-results/ for a run given
// no --results, named by what ran and when (UTC, to the second; -2, -3 ...
// when that name is taken): miles-ci-results/pull_request-20261204-151500.
// The clock is the front end's: the use cases never read it. The folders
// it makes are env's (Run removes them if the command ends before writing
// the results).
func defaultResults(env Env, what string, now time.Time) (string, error) {
	if err := os.Mkdir(resultsRoot, 0o755); err == nil {
		env.made.add(resultsRoot)
	} else if err := os.MkdirAll(resultsRoot, 0o755); err != nil {
		return "", fmt.Errorf("keeping the results under ./%s: %w; give --results DIR", resultsRoot, err)
	}
	base := filepath.Join(resultsRoot, what+"-"+now.UTC().Format("20060102-150405"))
	dir := base
	for i := 2; i < 1000; i++ {
		// Made here, empty, so two runs started in one second never pick
		// one folder.
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			env.made.add(dir)
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("keeping the results in %s: %w; give --results DIR", dir, err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
	return "", fmt.Errorf("keeping the results under ./%s: %s and 998 more are taken; give --results DIR", resultsRoot, base)
}

// runResultsName names a run's default results folder: its stage and
// shard (stage-a-cpu-2-of-4), or file-NAME for a single-file run.
func runResultsName(req stagerun.Request) string {
	if req.File != nil {
		// A file name from the checkout: only its plain characters.
		return "file-" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
				return r
			}
			return '_'
		}, strings.TrimSuffix(filepath.Base(req.File.File), ".py"))
	}
	name := req.Stage.Name
	if req.Plan != nil && req.Plan.Partition != nil {
		name += "-" + req.Plan.Partition.Folder()
	}
	return name
}

// warnRequest prints what the request's decisions found: the dependency
// warnings and its notes (e.g. that CI skips the stage on the PR).
func warnRequest(env Env, req stagerun.Request) {
	for _, w := range req.Deps.Warnings {
		warn(env, w)
	}
	for _, n := range req.Notes {
		warn(env, n)
	}
}

// runBatch is run --stage JOB --batch N: each file of batch N of the B200
// pool in turn, through the single-file run; the worst exit status is the
// batch's.
func runBatch(fs *flagSet, env Env, in usecase.Inputs, rf runFlags, n int) int {
	if *rf.results != "" {
		return fs.usageError("--results holds one run's results; a batch runs several files: give --results to file-run --file F")
	}
	if in.Shard != nil {
		return fs.usageError("--batch and --shard: the B200 pool has batches, not shards")
	}
	reqs, b, err := usecase.PoolBatch(in, n)
	if err != nil {
		return fail(env, err)
	}
	worst := 0
	for i, req := range reqs {
		j := b.Jobs[i]
		fmt.Fprintf(env.Stderr, "miles-ci: batch %d, job %d/%d: %s (%d GPU(s), runs on %s)\n", b.Batch, i+1, len(reqs), report.Printable(j.File), j.NumGPUs, report.Printable(strings.Join(j.RunsOn, "+")))
		if code := execute(req, in, rf, env); code > worst {
			worst = code
		}
	}
	return worst
}
