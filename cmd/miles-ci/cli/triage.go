package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/gitrepo"
	"github.com/radixark/miles-ci/hostgpu/detect"
	"github.com/radixark/miles-ci/hostlock"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/triage"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/usecase/runhistory"
)

func init() {
	register("triage", "run a failing test file K times at the head and at the merge base: regression, pre-existing, flaky, not-reproduced or inconclusive", runTriage)
}

// defaultTriageOut is where triage writes its attempts when --out is not given.
const defaultTriageOut = "miles-ci-triage"

func runTriage(args []string, env Env) int {
	fs := newFlagSet("triage", "--file PATH ... | --results DIR  [--repo DIR] [--pr N [--github-repo OWNER/NAME] | --base REF]\n"+
		"    [--attempts K] [--budget DURATION] [--out DIR] [--gpus all|none|IDS] [--visible-devices IDS] [--models DIR] [--datasets DIR]\n"+
		"    [--image-tag T] [--pr-body-file F] [--fork] [--lock-dir DIR] [--record] [--db URL|PATH] [--github-step-summary FILE]\n"+
		"    [--progress | --quiet | --engine-log FILE] [--json]", env)
	files := fs.List("file", "PATH", "the repo-relative test files to triage, e.g. tests/e2e/short/test_x.py")
	results := fs.String("results", "DIR", "triage every failed file of the run whose results folder is DIR (miles-ci ci, run or file-run --results)")
	repo := fs.String("repo", "DIR", "the head: a git checkout (default: the current folder)")
	base := fs.String("base", "REF", "compare with the merge base of HEAD and REF (default: origin/main, else main)")
	attempts := fs.Int("attempts", "K", "runs per side (default 3)", 1, usecase.MaxTriageAttempts)
	budget := fs.String("budget", "DURATION", "bound the whole triage, e.g. 2h or 45m (default: none; each file's attempts stay within its stage's timeout)")
	out := fs.String("out", "DIR", "replace the folder DIR with each attempt's results (FILE/SIDE-N/run.log, ...), triage.json and step-summary.md (default "+defaultTriageOut+")")
	gpus := fs.String("gpus", "all|none|IDS", "GPUs each attempt gets, at the head and at the base alike (default all; none for an engine without GPU support)")
	visible := fs.String("visible-devices", "IDS", "CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES of every attempt, e.g. 4,5")
	models := fs.String("models", "DIR", "host folder mounted at /root/models (GPU stages)")
	datasets := fs.String("datasets", "DIR", "host folder mounted at /root/datasets (GPU stages)")
	imageTag := fs.String("image-tag", "T", "workflow_dispatch input ci_image_tag", fromEnv("INPUT_CI_IMAGE_TAG"))
	prBody := fs.String("pr-body-file", "F", "file holding the pull request description (default: the text in $PR_BODY)")
	fork := fs.Bool("fork", "the pull request comes from a fork: run without secrets")
	quiet := fs.Bool("quiet", "keep no log of the engine's progress")
	progress := fs.Bool("progress", "stream the engine's progress to stderr (default: to a log file, named on stderr)")
	engineLogFile := fs.String("engine-log", "FILE", "write the engine's progress to FILE")
	asJSON := fs.Bool("json", "print the verdicts as JSON")
	lockDir := fs.String("lock-dir", "DIR", "the host lock's folder: each attempt holds its GPUs as run and ci do (default /dev/shm/miles-ci-gpus, the same for every user)", fromEnv("MILES_CI_LOCK_DIR"))
	gh := addGitHubFlags(fs)
	rec := addRecordFlags(fs)
	var within time.Duration
	fs.check(func() error {
		switch {
		case (len(*files) > 0) == fs.Given("results"):
			return fmt.Errorf("give --file PATH (one or more) or --results DIR, one of the two")
		case gh.active() && fs.Given("base"):
			return fmt.Errorf("--pr compares with the merge base of its default branch; drop --base, or drop --pr")
		}
		if fs.Given("budget") {
			d, err := time.ParseDuration(*budget)
			if err != nil || d <= 0 {
				return fmt.Errorf("--budget %q is not a duration; give e.g. 2h or 45m", *budget)
			}
			within = d
		}
		return nil
	})
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	if *results != "" {
		var err error
		if *files, err = usecase.FailedFiles(*results); err != nil {
			return fail(env, err)
		}
	}
	head := orDot(*repo)
	if fs.Given("file") {
		// A mistyped file is refused before anything is written.
		if err := usecase.CheckTriageFiles(head, *files); err != nil {
			return usageFailure(env, err)
		}
	}
	in := usecase.Inputs{Repo: head, ImageTag: *imageTag, Fork: *fork, GPUs: *gpus, VisibleDevices: *visible, Models: *models != "", Datasets: *datasets != "",
		Given: usecase.Given{Body: fs.Given("pr-body-file")}}
	var err error
	if in.PRBody, in.PR, err = readBodyOrPR(fs, gh, &head, *prBody); err != nil {
		return fail(env, err)
	}
	var given []string
	if fs.Given("file") {
		given = *files
	}
	if err := usecase.CheckTriageHead(in, given); err != nil {
		return usageFailure(env, err)
	}
	dest := *out
	if dest == "" {
		dest = defaultTriageOut
	}
	if err := checkResultsDir(dest, head); err != nil {
		return fail(env, err)
	}
	if err := gh.checkSummary(env); err != nil {
		return fail(env, err)
	}
	if err := checkHistoryApart(fs, rec, env, dest); err != nil {
		return fail(env, err)
	}
	unlock, err := lockResults(dest)
	if err != nil {
		return fail(env, err)
	}
	defer unlock()
	ctx, stop := signalContext(env)
	defer stop()
	scratch, err := os.MkdirTemp("", "miles-ci-triage-")
	if err != nil {
		return fail(env, err)
	}
	defer os.RemoveAll(scratch)
	baseDir, headSHA, baseSHA, err := gitrepo.BaseCheckout(ctx, head, *base, scratch)
	if err != nil {
		return fail(env, err)
	}
	req := usecase.TriageRequest{Head: in, BaseRepo: baseDir, HeadCommit: headSHA, BaseCommit: baseSHA, Files: *files, Budget: within, Out: dest}
	secrets := stagerun.HandedSecrets(req.FromFork(), env.secret)
	m, err := report.NewMasker(secrets)
	if err != nil {
		return fail(env, err)
	}
	log, closeLog, err := engineLog(env, runFlags{progress: progress, quiet: quiet, engineLog: engineLogFile}, m)
	if err != nil {
		return fail(env, err)
	}
	defer closeLog()
	start := time.Now()
	runner := &triageEngine{ctx: ctx, head: head, log: log, m: m, inputs: engine.Inputs{Secrets: secrets, Models: *models, Datasets: *datasets},
		lock: hostlock.New(lockDirOr(*lockDir), os.Args), waiting: func(h cirun.Held) {
			fmt.Fprintf(env.Stderr, "miles-ci: [%4.0fs] waiting for GPUs %s, held by %s\n", time.Since(start).Seconds(), h.Devices, ghoutput.Plain(h.By))
		}}
	defer runner.close()
	req.Session, req.Runner = start.UTC().Format("20060102T150405Z"), runner
	req.Notify = func(file string, a triage.Attempt) {
		// The file may come from a results folder, the reason from the
		// container (its first failure, an error it caused): one line each.
		line := fmt.Sprintf("miles-ci: [%4.0fs] triage %s %s #%d %s (%.1fs)", time.Since(start).Seconds(), report.Printable(file), a.Side, a.N, a.Outcome, a.DurationS)
		if a.Reason != "" {
			line += ": " + report.Printable(a.Reason)
		}
		io.WriteString(env.Stderr, m.Mask(line)+"\n")
	}
	if attempts.Set {
		req.Attempts = attempts.Value
	}
	ans, err := usecase.Triage(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	js, err := encode.JSON(ans)
	if err != nil {
		return fail(env, err)
	}
	md := m.Mask(ans.Markdown())
	resultFiles, err := ans.ResultFiles(md, []byte(m.Mask(string(js))), m)
	if err != nil {
		return fail(env, err)
	}
	return finish(env, ending{
		verdict: func() {
			if *asJSON {
				writeJSON(env.Stdout, []byte(m.Mask(string(js))))
			} else {
				io.WriteString(env.Stdout, m.Mask(ans.Text()))
			}
		},
		exit: ans.ExitStatus(), gh: gh, stepSummary: md,
		record: func() []stagerun.ResultFile {
			return recordTriage(ctx, fs, rec, env, runhistory.TriageRecordRequest{Answer: ans, HeadRepo: head, BaseRepo: baseDir}, dest)
		},
		recording: recording(rec, env),
		dir:       dest, checkout: head, files: resultFiles, depth: 3, mask: m.Mask,
		written: func() {
			if !*asJSON {
				io.WriteString(env.Stdout, "results: "+dest+"\n")
			}
		},
	})
}

// recordTriage records the attempts when asked, as recordCI does: a failed
// write is a warning naming where the rows are kept (each attempt's folder).
func recordTriage(ctx context.Context, fs *flagSet, rf recordFlags, env Env, req runhistory.TriageRecordRequest, out string) []stagerun.ResultFile {
	db, configured, err := historyDB(fs, *rf.db, env)
	if !*rf.record && !configured {
		return nil
	}
	if err != nil {
		warnRecordFailed(env, "", err, "")
		return nil
	}
	req.DB, req.At = db, time.Now()
	return recorded(env, db, out, "%[1]d triage attempt(s) in %[2]s (event "+triage.Event+")", runhistory.RecordTriage(ctx, req))
}

// triageResolve resolves a request's refs on a session's container; tests
// replace it.
var triageResolve = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string) (stagerun.Request, error) {
	return stagerun.Resolve(ctx, c, req, nonce)
}

// triageEngine runs a triage's attempts on the Dagger engine: one session
// per checkout (the head's and the merge base's), opened when first used.
type triageEngine struct {
	// ctx is the command's: a session lives as long as the triage, not
	// as one attempt (whose context ends with it).
	ctx      context.Context
	head     string
	log      io.Writer
	lock     cirun.Leaser
	waiting  func(cirun.Held)
	m        *report.Masker
	inputs   engine.Inputs
	sessions map[string]ciSession
}

func (e *triageEngine) session(repo string) (ciSession, error) {
	if s, ok := e.sessions[repo]; ok {
		return s, nil
	}
	in := e.inputs
	in.Repo = repo
	s, err := ciConnect(e.ctx, in, e.log)
	if err != nil {
		return nil, err
	}
	if e.sessions == nil {
		e.sessions = map[string]ciSession{}
	}
	e.sessions[repo] = s
	return s, nil
}

func (e *triageEngine) close() {
	for _, s := range e.sessions {
		s.Close()
	}
}

func (e *triageEngine) Resolve(ctx context.Context, req stagerun.Request, nonce string) (stagerun.Request, error) {
	s, err := e.session(e.head)
	if err != nil {
		return req, err
	}
	return triageResolve(ctx, s.Container(), req, nonce)
}

func (e *triageEngine) Run(ctx context.Context, repo string, req stagerun.Request, nonce string) (stagerun.Result, error) {
	s, err := e.session(repo)
	if err != nil {
		return stagerun.Result{}, err
	}
	// Each attempt holds its GPUs in the host lock while it runs, as run
	// and every shard of ci do: a triage never shares a device with them.
	if h, devs := usecase.RunDevices(req, detect.Here); len(devs) > 0 {
		release, err := hostlock.Lease(ctx, e.lock, h, devs, e.waiting)
		if err != nil {
			return stagerun.Result{}, err
		}
		defer release()
	}
	run := ciShardRun
	if run == nil {
		run = usecase.PrepareAndTest
	}
	res, _, err := run(ctx, s.Container(), req, nonce, e.m)
	if err != nil {
		return res, fmt.Errorf("%s", e.m.Mask(err.Error()))
	}
	return res, nil
}
