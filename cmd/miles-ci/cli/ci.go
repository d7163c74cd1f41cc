package cli

import (
	"errors"
	"fmt"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/gitrepo"
	"github.com/radixark/miles-ci/hostgpu/detect"
	"github.com/radixark/miles-ci/hostlock"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/usecase/ci"
	"github.com/radixark/miles-ci/whatif"
)

func init() {
	register("ci", "run (or with --dry-run show) every job one event's PR workflows run, on one host (rules §12)", runCI)
}

func runCI(args []string, env Env) int {
	fs := newFlagSet("ci", "--event pull_request|schedule|workflow_dispatch|release [--schedule CRON] [--pr-labels-json JSON] [--action A]\n"+
		"    [--changed-files FILE] [--pr-body-file F] [--pr-number N] [--fork] [--image-tag T] [--sglang-input R] [--megatron-input R]\n"+
		"    [--release-lock FILE] [--pr N [--github-repo OWNER/NAME]] [--repo DIR] [--planner miles-ci|checkout]\n"+
		"    [--gpus all|none|IDS|KIND:IDS | --hosts FILE] [--substitute FROM=TO ...] [--lock-dir DIR] [--max-parallel N] [--only S ...] [--skip S ...]\n"+
		"    [--cache-registry REF] [--results DIR] [--rerun-failed DIR] [--head-sha SHA] [--record] [--db URL|PATH] [--gate-db URL|PATH]\n"+
		"    [--progress | --quiet | --engine-log FILE] [--dry-run [--json | --mermaid]] [--what-if [--json] [--events E ...] [--as-of YYYY-MM-DD]]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout whose workflows make the graph (default: the current folder)")
	event := fs.String("event", "E", "pull_request, schedule, workflow_dispatch, or release (release-branch-cut.yml calling the PR workflows)", fromEnv("EVENT_NAME"))
	schedule := fs.String("schedule", "CRON", "cron of a scheduled run", fromEnv("SCHEDULE"))
	prLabels := fs.String("pr-labels-json", "JSON", "the PR's label names as a JSON array", fromEnv("PR_LABELS_JSON"))
	action := fs.String("action", "A", "the pull_request activity type (default synchronize; closed runs nothing)")
	changed := fs.String("changed-files", "FILE", "output of git diff --name-status -z -M HEAD^1 HEAD (the PR's diff)", fromEnv("CHANGED_FILES_PATH"))
	prBody := fs.String("pr-body-file", "F", "file holding the pull request description (default: the text in $PR_BODY)")
	prNumber := fs.Int("pr-number", "N", "the pull request number (its image is pr-N)", 1, 2147483647)
	fork := fs.Bool("fork", "the pull request comes from a fork: no secrets, no PR image")
	imageTag := fs.String("image-tag", "T", "workflow_dispatch input ci_image_tag", fromEnv("INPUT_CI_IMAGE_TAG"))
	sglang := fs.String("sglang-input", "R", "workflow_dispatch input ci_sglang_pr", fromEnv("INPUT_SGLANG_PR"))
	megatron := fs.String("megatron-input", "R", "workflow_dispatch input ci_megatron_pr", fromEnv("INPUT_MEGATRON_PR"))
	lockFile := fs.String("release-lock", "FILE", "with --event release: the release branch's release-lock.json (it stands in for cut-release-branch)")
	gpus := fs.String("gpus", "all|none|IDS", "the host's GPUs: all (the /dev/nvidia* devices), ids of a model h200:0-7 or h200:0-3,h100:4-7 (each shard runs only on devices of its stage's model), bare ids 0-7 (kinds not checked), none (stand-ins: every GPU shard runs without a device), or none:IDS / none:KIND:IDS (stand-ins scheduled as on a host with those GPUs: each shard gets its devices as CUDA_VISIBLE_DEVICES, the engine none)")
	hostsFile := fs.String("hosts", "FILE", "a YAML list of hosts (name, engine, gpus, cpu, runners), each shard placed on a host of its kind (docs/hosts.md)")
	subst := fs.List("substitute", "FROM=TO", "run the stages of GPU model FROM on devices of model TO, e.g. h100=h200 (repeatable)")
	lockDir := fs.String("lock-dir", "DIR", "the host lock's folder: one lock file per GPU that every process on the host honours (default /dev/shm/miles-ci-gpus, the same for every user)", fromEnv("MILES_CI_LOCK_DIR"))
	maxPar := fs.Int("max-parallel", "N", "run at most N shards at once (default: as many as fit)", 1, 256)
	only := fs.List("only", "S", "run only these stages or backends (cpu, cuda, rocm); the others count as passed for their dependents")
	skip := fs.List("skip", "S", "leave out these stages or backends")
	results := fs.String("results", "DIR", "replace the folder DIR with the run's results: DIR/STAGE/N-of-M/ per shard, summary.json, junit.xml, step-summary.md (default: a new folder ./miles-ci-results/EVENT-YYYYMMDD-HHMMSS)")
	rerun := fs.String("rerun-failed", "DIR", "re-run what failed in the run whose results folder is DIR (same commit, event, trigger facts and planner): its failed, cancelled and not-run shards and the jobs whose if: now holds; the passed shards keep their results (default --results: DIR)")
	headSHA := fs.String("head-sha", "SHA", "the checkout's commit, for the run's facts (default: read from DIR/.git)")
	dryRun := fs.Bool("dry-run", "print the graph (jobs, needs, shards, GPUs, tests, what is skipped and why) without an engine")
	asJSON := fs.Bool("json", "with --dry-run: one JSON entry per job and shard")
	mermaid := fs.Bool("mermaid", "with --dry-run: the graph as a Mermaid flowchart")
	quiet := fs.Bool("quiet", "keep no log of the engine's progress")
	progress := fs.Bool("progress", "stream the engine's progress to stderr (default: to a log file, named on stderr)")
	engineLogFile := fs.String("engine-log", "FILE", "write the engine's progress to FILE")
	cacheRegistry := fs.String("cache-registry", "REF", "share every shard's prepared dependency layers across hosts through the registry repository REF (e.g. 127.0.0.1:5000/miles-ci/layers): pulled by digest when a holder of the secret MILES_CI_CACHE_KEY published them with their proof, else built and published; the summary counts pulls and builds")
	whatIf := fs.Bool("what-if", "predict the run without running it: each shard's start, end, host and devices, the span against its lower bound and the GPU-hours, from the runtime history's durations (--db) else est_time; nothing is contacted (docs/what-if.md)")
	events := fs.List("events", "E", "the runtime history's samples a run orders its shards by and a what-if predicts with: of these events (default: schedule, as est-time; local adds local runs)")
	asOf := fs.String("as-of", "YYYY-MM-DD", "the UTC date whose midnight ends the history's 21-day window (default: tomorrow, so today's runs count)")
	rec := addRecordFlags(fs)
	gateDB := gateDBFlag(fs)
	gh := addGitHubFlags(fs)
	pf := addPlannerFlags(fs)
	// Which inputs go together is the request's (CIRequest.Validate); how
	// the answer prints is the command's.
	fs.check(func() error {
		if *whatIf && *mermaid {
			return errors.New(ci.WhatIfAlone)
		}
		if (*asJSON || *mermaid) && !*dryRun && !*whatIf {
			return fmt.Errorf("--json and --mermaid go with --dry-run; a run writes JSON to --results DIR/summary.json")
		}
		if *asJSON && *mermaid {
			return fmt.Errorf("give --json or --mermaid, not both")
		}
		if fs.Given("as-of") {
			if _, err := asOfDate(*asOf); err != nil {
				return err
			}
		}
		return nil
	})
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	req := ci.CIRequest{Repo: *repo, Event: *event, Action: *action, Schedule: *schedule, PRLabelsJSON: *prLabels, Fork: *fork,
		ImageTag: *imageTag, SGLangInput: *sglang, MegatronInput: *megatron, Only: *only, Skip: *skip,
		Given: usecase.Given{Event: fs.Given("event"), PRLabels: fs.Given("pr-labels-json"), Body: fs.Given("pr-body-file"), Number: prNumber.Set, Diff: fs.Given("changed-files"),
			PR: gh.active(), Schedule: fs.Given("schedule"), Release: fs.Given("release-lock"), Hosts: fs.Given("hosts"),
			History: fs.Given("events") || fs.Given("as-of"), Record: fs.Given("record")}}
	if prNumber.Set {
		req.PRNumber = prNumber.Value
	}
	if maxPar.Set {
		req.MaxParallel = maxPar.Value
	}
	req.HeadSHA, req.Git = *headSHA, gitrepo.Local{}
	req.DryRun, req.WhatIf, req.RerunFailed, req.Results = *dryRun, *whatIf, *rerun, *results
	req.GPUsGiven = fs.Given("gpus")
	// Refused before a hosts file, a lockfile or the pull request is read.
	if err := req.Validate(); err != nil {
		return fs.usageError("%v", err)
	}
	var err error
	if req.Substitutes, err = usecase.ParseSubstitutes(*subst); err != nil {
		return fs.usageError("%v", err)
	}
	if *hostsFile != "" {
		if req.Hosts, err = usecase.ReadHosts(*hostsFile, detect.Here); err != nil {
			return fs.usageError("%v", err)
		}
	}
	g, err := cirun.ParseGPUs(*gpus)
	if err != nil {
		return fs.usageError("%v", err)
	}
	req.Host, req.AllGPUs, req.Detect = g.Host, g.All, detect.Here
	if fs.Given("release-lock") {
		lock, err := usecase.ReleaseLock(usecase.ReleaseLockRequest{Path: *lockFile})
		if err != nil {
			return fail(env, err)
		}
		req.Release = lock
	}
	if gh.active() {
		if req.PR, err = gh.fetch(env, !fs.Given("changed-files")); err != nil {
			return fail(env, err)
		}
		if err := gh.noteAndCheck(env, *repo, req.PR); err != nil {
			return fail(env, err)
		}
	}
	if !gh.active() || fs.Given("pr-body-file") {
		if req.PRBody, err = readBody(fs, *prBody); err != nil {
			return fail(env, err)
		}
	}
	if *changed != "" {
		req.ReadDiff = func() ([]byte, string, error) {
			diff, unusable := usecase.ReadChangedFiles(*changed, "--changed-files "+*changed)
			return diff, unusable, nil
		}
	}
	if pf.checkout() {
		req.OpenCheckout = pf.opener(*repo)
	}
	// A run orders its shards by the history's durations, and a what-if
	// predicts with them; the use case reads them where it needs them.
	req.ReadDurations = func(whatIf bool) (*whatif.Durations, error) {
		return ciDurations(fs, rec, env, *events, *asOf, whatIf)
	}
	ctx, stop := signalContext(env)
	defer stop()
	r := newCIRun(ctx, env, fs, gh, req, ciEngineFlags{quiet: *quiet, progress: *progress, engineLog: *engineLogFile, fs: fs, rec: rec, gateDB: *gateDB, cacheRegistry: *cacheRegistry,
		live: isTerminal(env.Stdout, env.Getenv)})
	defer r.close()
	req.Shards, req.RunID, req.Notify, req.Predict = r.runner, r.runner.Nonce, r.notify, recording(rec, env)
	req.Leaser = hostlock.New(lockDirOr(*lockDir), append([]string{"miles-ci", "ci"}, args...))
	ans, err := ci.CI(ctx, req)
	if r.progress != nil {
		r.progress.done()
	}
	if err != nil {
		printMessages(env, ans.Messages)
		return r.failure(err)
	}
	return r.print(ans, ciPrintFlags{asJSON: *asJSON, mermaid: *mermaid, results: *results, repo: *repo})
}

// orDot is a folder flag's value, "." when empty.
func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// lockDirOr is the host lock's folder: the one given, else the host's
// default (tests keep theirs apart).
func lockDirOr(dir string) string {
	if dir == "" {
		return defaultLockDir()
	}
	return dir
}

// usageFailure prints err and exits 2: input the command cannot use.
func usageFailure(env Env, err error) int {
	fail(env, err)
	return 2
}

// ciFailure is fail, but exit 2 for a --rerun-failed folder of another run
// and a GPU model the run cannot use, and a flag's value the use case could
// not use with the usage (fs).
func ciFailure(env Env, fs *flagSet, err error) int {
	var model *ci.ModelError
	var usage *ci.UsageError
	var input *ci.InputError
	switch {
	case errors.As(err, &usage):
		return fs.usageError("%v", err)
	case errors.Is(err, usecase.ErrNotSameRun) || errors.As(err, &model) || errors.As(err, &input):
		return usageFailure(env, err)
	}
	return fail(env, err)
}

var defaultLockDir = hostlock.DefaultDir

// ciEngineFlags are the real run's output flags.
type ciEngineFlags struct {
	engineLog string
	// cacheRegistry is --cache-registry (EngineShards.CacheRegistry).
	cacheRegistry   string
	quiet, progress bool
	// live draws a live table of the jobs (stdout is a terminal).
	live bool
	// fs and rec are the recording flags (--record, --db).
	fs  *flagSet
	rec recordFlags
	// gateDB is --gate-db, the metric gate's store.
	gateDB string
}
