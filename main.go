// Miles CI as a Dagger module: run any stage shard of the Miles CI in its
// container, from its image, dependency refs and patch, exactly as the
// workflows do, and answer what CI runs where.
//
// This file is a thin adapter: it turns typed Dagger arguments into the same
// requests the miles-ci command builds (usecase), and renders their
// container spec (package pipeline) on the engine through adapter.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/pipeline"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// MilesCi runs Miles CI stage shards and answers what CI runs where. The
// constructor takes the checkout and the facts of the run (PR body, dispatch
// inputs, GPUs, secrets, data folders) that every stage shares.
type MilesCi struct {
	// +private
	Source *dagger.Directory
	// +private
	PrBodyFile *dagger.File
	// +private
	SglangPr string
	// +private
	MegatronPr string
	// +private
	ImageTag string
	// +private
	PrNumber string
	// +private
	HeadSha string
	// +private
	Fork bool
	// +private
	Gpus string
	// +private
	VisibleDevices string
	// +private
	WandbApiKey *dagger.Secret
	// +private
	NeonDatabaseUrl *dagger.Secret
	// +private
	HfToken *dagger.Secret
	// +private
	Models *dagger.Directory
	// +private
	Datasets *dagger.Directory
	// +private
	Pr int
	// +private
	GithubRepo string
	// +private
	GithubToken *dagger.Secret
	// +private
	GithubApiUrl string
	// +private
	GithubEnv []string
}

// New sets up a run of Miles CI on a checkout. What only some calls need
// comes in chained facets that return a copy: with-pr (a pull request read
// from GitHub), with-pull-request (its facts given here), with-dispatch (the
// workflow_dispatch inputs), with-secrets, with-data and with-github-env.
func New(
	// The Miles checkout to run (default: the directory the module is called from).
	// +defaultPath="/"
	// +ignore=[".git", "**/__pycache__", "**/.pytest_cache", "**/.venv", "**/*.egg-info"]
	source *dagger.Directory,
	// GPUs for the container: all, none (an engine without GPU support) or device ids such as 0,1.
	// +optional
	// +default="all"
	gpus string,
	// CUDA_VISIBLE_DEVICES (or HIP_VISIBLE_DEVICES on ROCm), e.g. 4,5: the host's share of its GPUs.
	// +optional
	visibleDevices string,
) *MilesCi {
	return &MilesCi{Source: source, Gpus: gpus, VisibleDevices: visibleDevices}
}

// WithPr reads a pull request from GitHub: its body, labels, head SHA, fork
// flag and changed files fill the facts not given (as `miles-ci --pr N`).
func (m *MilesCi) WithPr(
	// The pull request number.
	number int,
	// Its repository, owner/name (default radixark/miles).
	// +optional
	repo string,
	// A GitHub token, e.g. env:GITHUB_TOKEN (without one: anonymous, public repositories, 60 requests an hour).
	// +optional
	token *dagger.Secret,
	// The GitHub REST API root (GITHUB_API_URL in Actions; default https://api.github.com/).
	// +optional
	apiUrl string,
) (*MilesCi, error) {
	if number <= 0 {
		return nil, fmt.Errorf("with-pr --number %d is not a pull request number; give the number, e.g. with-pr --number 2874", number)
	}
	if err := github.CheckArgs(number, repo, apiUrl); err != nil {
		return nil, err
	}
	c := *m
	c.Pr, c.GithubRepo, c.GithubToken, c.GithubApiUrl = number, repo, token, apiUrl
	return &c, nil
}

// WithPullRequest gives the facts of the pull request a run is for, without
// asking GitHub; each wins over the same fact of with-pr.
func (m *MilesCi) WithPullRequest(
	// The pull request description; its ci-sglang-pr, ci-megatron-pr and ci-image-tag lines pin the run.
	// +optional
	bodyFile *dagger.File,
	// The pull request number, for GITHUB_COMMIT_NAME ("" when the run is not for a PR).
	// +optional
	number string,
	// The tested commit, for GITHUB_COMMIT_NAME ("" is written as local).
	// +optional
	headSha string,
	// The pull request comes from a fork: the run gets no secrets.
	// +optional
	fork bool,
) *MilesCi {
	c := *m
	c.PrBodyFile, c.PrNumber, c.HeadSha, c.Fork = bodyFile, number, headSha, fork
	return &c
}

// WithDispatch gives the workflow_dispatch inputs, which win over the PR body.
func (m *MilesCi) WithDispatch(
	// ci_sglang_pr: an SGLang ref (#N, branch, tag or commit).
	// +optional
	sglangPr string,
	// ci_megatron_pr: a Megatron-LM ref.
	// +optional
	megatronPr string,
	// ci_image_tag: the CI image tag (radixark/miles, or rocm/sgl-dev for ROCm).
	// +optional
	imageTag string,
) *MilesCi {
	c := *m
	c.SglangPr, c.MegatronPr, c.ImageTag = sglangPr, megatronPr, imageTag
	return &c
}

// WithSecrets gives the secrets a stage gets (none on a fork's pull request).
func (m *MilesCi) WithSecrets(
	// WANDB_API_KEY for the GPU stages, e.g. env:WANDB_API_KEY.
	// +optional
	wandbApiKey *dagger.Secret,
	// NEON_DATABASE_URL for the CUDA stages' metric gate, e.g. env:NEON_DATABASE_URL.
	// +optional
	neonDatabaseUrl *dagger.Secret,
	// HF_TOKEN for the CPU stages, e.g. env:HF_TOKEN.
	// +optional
	hfToken *dagger.Secret,
) *MilesCi {
	c := *m
	c.WandbApiKey, c.NeonDatabaseUrl, c.HfToken = wandbApiKey, neonDatabaseUrl, hfToken
	return &c
}

// WithData mounts the runners' data folders.
func (m *MilesCi) WithData(
	// Model folder mounted at /root/models (the runners' /data/miles_ci/models).
	// +optional
	models *dagger.Directory,
	// Dataset folder mounted at /root/datasets (the runners' /data/miles_ci/datasets).
	// +optional
	datasets *dagger.Directory,
) *MilesCi {
	c := *m
	c.Models, c.Datasets = models, datasets
	return &c
}

// WithGithubEnv gives the GitHub Actions run's facts, set in the run phase
// only (never a cached layer).
func (m *MilesCi) WithGithubEnv(
	// NAME=VALUE entries: GITHUB_SHA, GITHUB_REF, GITHUB_EVENT_NAME, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_REPOSITORY, GITHUB_SERVER_URL, GITHUB_WORKFLOW, GITHUB_JOB.
	// +optional
	env []string,
) (*MilesCi, error) {
	// Bad facts fail here, before any stage is planned.
	if _, err := usecase.GitHubFromArgs(env); err != nil {
		return nil, err
	}
	c := *m
	c.GithubEnv = env
	return &c, nil
}

// maxBodyBytes bounds the PR body read; GitHub caps a description at 65536 characters.
const maxBodyBytes = 1 << 20

// inputs are the constructor's facts as a run request's inputs, with the
// checkout's tests/ and release-lock.json exported to dir; pr is the pull
// request --pr read (JSON, "" without --pr).
func (m *MilesCi) inputs(ctx context.Context, dir, pr string) (usecase.Inputs, error) {
	in := usecase.Inputs{Repo: dir, SGLangInput: m.SglangPr, MegatronInput: m.MegatronPr, ImageTag: m.ImageTag,
		PRNumber: m.PrNumber, HeadSHA: m.HeadSha, Fork: m.Fork, GPUs: m.Gpus, VisibleDevices: m.VisibleDevices,
		Models: m.Models != nil, Datasets: m.Datasets != nil,
		Given: usecase.Given{Body: m.PrBodyFile != nil, Number: m.PrNumber != "", HeadSHA: m.HeadSha != ""}}
	var err error
	if in.GitHub, err = usecase.GitHubFromArgs(m.GithubEnv); err != nil {
		return in, err
	}
	if pr != "" {
		if in.PR, err = github.DecodePR(pr); err != nil {
			return in, err
		}
	}
	if m.PrBodyFile != nil {
		body, err := readFile(ctx, m.PrBodyFile, maxBodyBytes, "with-pull-request --body-file")
		if err != nil {
			return in, err
		}
		in.PRBody = body
	}
	return in, nil
}

// readFile reads a small File argument, refusing one larger than limit.
func readFile(ctx context.Context, f *dagger.File, limit int, what string) (string, error) {
	size, err := f.Size(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if size > limit {
		return "", fmt.Errorf("%s: %d bytes, more than the %d it can hold", what, size, limit)
	}
	return f.Contents(ctx)
}

// pullRequest reads the pull request --pr names, as JSON to keep in an
// object's field ("" without --pr); with files, its changed files too. The
// token is read here only, into the request header; it is never logged.
func (m *MilesCi) pullRequest(ctx context.Context, files bool) (string, error) {
	if m.Pr == 0 {
		return "", nil
	}
	o := github.Options{APIURL: m.GithubApiUrl, TokenFrom: "with-pr --token env:GITHUB_TOKEN"}
	if m.GithubToken != nil {
		token, err := m.GithubToken.Plaintext(ctx)
		if err != nil {
			return "", fmt.Errorf("--github-token: %w", err)
		}
		o.Token = token
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pr, err := github.Fetch(ctx, github.Request{Repo: m.GithubRepo, Number: m.Pr, Files: files, Options: o})
	if err != nil {
		return "", err
	}
	fmt.Fprintln(os.Stderr, "trigger facts of "+pr.Describe())
	return pr.Encode()
}

// withExport exports what planning reads of the checkout (tests/, the
// workflows that hold the roster, release-lock.json) to a folder of the
// module runtime and runs fn there.
func withExport[T any](ctx context.Context, source *dagger.Directory, fn func(dir string) (T, error)) (T, error) {
	var zero T
	tmp, err := os.MkdirTemp("", "miles-ci-source-")
	if err != nil {
		return zero, err
	}
	defer os.RemoveAll(tmp)
	planning := source.Filter(dagger.DirectoryFilterOpts{Include: []string{"tests/", ".github/workflows/", deps.LockFileName}})
	if _, err := planning.Export(ctx, tmp); err != nil {
		return zero, fmt.Errorf("export the checkout's tests/: %w", err)
	}
	return fn(tmp)
}

// withCheckout is withExport for a source that must be a Miles checkout.
func withCheckout[T any](ctx context.Context, source *dagger.Directory, fn func(dir string) (T, error)) (T, error) {
	return withExport(ctx, source, func(dir string) (T, error) {
		if err := usecase.CheckSource(dir); err != nil {
			var zero T
			return zero, err
		}
		return fn(dir)
	})
}

// nonce is a run nonce: the run id when given, else the time, so an unnamed run is always a new one.
func nonce(runID string) string {
	if runID != "" {
		return runID
	}
	return strconv.FormatInt(time.Now().UnixNano(), 10)
}

// Stage selects one stage of the roster with the cadence and labels of the
// run (with with-pr: the pull request's, read once per session).
// +cache="session"
func (m *MilesCi) Stage(
	ctx context.Context,
	// Stage (= suite) name, e.g. stage-c-4-gpu-h200 (see stages).
	name string,
	// CI cadence (default regular).
	// +optional
	cadence Cadence,
	// Raw PR labels passed to run_suite.py, e.g. run-ci-megatron.
	// +optional
	labels []string,
	// Include every known label, as a manual dispatch of a GPU stage does.
	// +optional
	matchAllLabels bool,
	// GitHub event whose trigger facts decide cadence and labels instead.
	// +optional
	event Event,
	// Cron of a scheduled run (with event schedule).
	// +optional
	schedule string,
	// The PR's label names as a JSON array (with event pull_request).
	// +optional
	prLabelsJson string,
) (*Stage, error) {
	return (&Stage{Ci: m, Name: name, Cadence: string(cadence), Labels: labels, MatchAllLabels: matchAllLabels,
		Event: string(event), Schedule: schedule, PrLabelsJson: prLabelsJson}).check(ctx)
}

// check reads the pull request of --pr into the stage, then plans the stage
// once, so a bad name, cadence or label fails at once.
func (s *Stage) check(ctx context.Context) (*Stage, error) {
	if s.Ci.Pr != 0 {
		// Bad arguments fail before GitHub is asked.
		if err := usecase.CheckPR(usecase.Inputs{Event: s.Event, Schedule: s.Schedule, PRLabelsJSON: s.PrLabelsJson}); err != nil {
			return nil, err
		}
		var err error
		if s.PullRequest, err = s.Ci.pullRequest(ctx, true); err != nil {
			return nil, err
		}
	}
	_, err := withCheckout(ctx, s.Ci.Source, func(dir string) ([]*policy.Plan, error) {
		in, err := s.inputs(ctx, dir)
		if err != nil {
			return nil, err
		}
		return usecase.Plans(in)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Stage is one stage of Miles CI for a run: its cadence and labels.
type Stage struct {
	// +private
	Ci *MilesCi
	// The stage (= suite) name.
	Name string
	// +private
	Cadence string
	// +private
	Labels []string
	// +private
	MatchAllLabels bool
	// +private
	Event string
	// +private
	Schedule string
	// +private
	PrLabelsJson string
	// +private
	ReleaseLock string
	// +private
	PullRequest string
}

// inputs are the stage's run inputs.
func (s *Stage) inputs(ctx context.Context, dir string) (usecase.Inputs, error) {
	in, err := s.Ci.inputs(ctx, dir, s.PullRequest)
	if err != nil {
		return in, err
	}
	in.Given.Cadence, in.Given.Labels = s.Cadence != "", s.Labels != nil
	in.Stage, in.Cadence, in.Labels, in.MatchAllLabels = s.Name, s.Cadence, s.Labels, s.MatchAllLabels
	in.Event, in.Schedule, in.PRLabelsJSON = s.Event, s.Schedule, s.PrLabelsJson
	if s.ReleaseLock != "" {
		lock, err := deps.ParseLock(deps.LockFileName, []byte(s.ReleaseLock))
		if err != nil {
			return in, err
		}
		in.Release = &lock
	}
	return in, nil
}

// Plan returns miles-ci's plan of every shard of the stage, as a JSON array
// (each entry as `miles-ci plan --json` prints it).
func (s *Stage) Plan(ctx context.Context) (string, error) {
	return withCheckout(ctx, s.Ci.Source, func(dir string) (string, error) {
		in, err := s.inputs(ctx, dir)
		if err != nil {
			return "", err
		}
		plans, err := usecase.Plans(in)
		if err != nil {
			return "", err
		}
		return jsonString(plans)
	})
}

// Shard selects one shard of the stage (0 for an unsharded stage).
// +cache="session"
func (s *Stage) Shard(
	ctx context.Context,
	// 0-based shard index, below the stage's shard count.
	id int,
) (*Shard, error) {
	sh := &Shard{Stage: s, Index: id}
	req, err := sh.request(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range req.Notes {
		fmt.Fprintln(os.Stderr, n)
	}
	return sh, nil
}

// Shard is one shard of a stage: what one matrix job of the workflow runs.
type Shard struct {
	// +private
	Stage *Stage
	// The 0-based shard index ("id" is a name Dagger reserves).
	Index int
}

// request builds the shard's run request.
func (sh *Shard) request(ctx context.Context) (pipeline.Request, error) {
	return withCheckout(ctx, sh.Stage.Ci.Source, func(dir string) (pipeline.Request, error) {
		in, err := sh.Stage.inputs(ctx, dir)
		if err != nil {
			return pipeline.Request{}, err
		}
		id := sh.Index
		in.Shard = &id
		return usecase.Stage(in)
	})
}

// Plan returns miles-ci's plan of the shard as JSON (`miles-ci plan ... --json`).
func (sh *Shard) Plan(ctx context.Context) (string, error) {
	req, err := sh.request(ctx)
	if err != nil {
		return "", err
	}
	return jsonString(req.Plan)
}

// Spec returns the shard's container spec as JSON, without running anything
// (`miles-ci run ... --dry-run --json`): image, env, secret names, caches, steps.
func (sh *Shard) Spec(ctx context.Context) (string, error) {
	req, err := sh.request(ctx)
	if err != nil {
		return "", err
	}
	return specJSON(req)
}

// Container returns the shard's container, ready to run: dependencies at
// their resolved commits, the source in the workspace, env, GPUs and secrets
// set (`... container terminal` opens a shell in it).
// +cache="session"
func (sh *Shard) Container(ctx context.Context) (*dagger.Container, error) {
	req, err := sh.request(ctx)
	if err != nil {
		return nil, err
	}
	return sh.Stage.Ci.container(ctx, req)
}

// Test runs the shard's tests as CI does and returns the results; a failing
// test is a result (see assert), not an error.
// +cache="never"
func (sh *Shard) Test(
	ctx context.Context,
	// Run id: calls with the same id share one run through the engine's
	// cache (e.g. results, then assert); without one every call runs anew.
	// +optional
	runId string,
	// Minutes after which miles-ci ends the run as a timeout (default: the stage job's, 60 for CPU stages, 360 for GPU stages).
	// +optional
	timeoutMinutes int,
) (*TestRun, error) {
	req, err := sh.request(ctx)
	if err != nil {
		return nil, err
	}
	if timeoutMinutes < 0 {
		return nil, fmt.Errorf("--timeout-minutes %d: give a number of minutes above 0", timeoutMinutes)
	}
	req.TimeoutMinutes = timeoutMinutes
	return sh.Stage.Ci.test(ctx, req, runId)
}

// container prepares a request's container.
func (m *MilesCi) container(ctx context.Context, req pipeline.Request) (*dagger.Container, error) {
	s := m.newSession(req.Fork)
	p, _, err := pipeline.Prepare(ctx, s.container(), req, nonce(""))
	if err != nil {
		return nil, err
	}
	return unwrap(p.Container), nil
}

// test prepares and runs a request. The results folder is built here from
// what pipeline.Test read (regular files of fixed names, masked), never a
// folder of the container.
func (m *MilesCi) test(ctx context.Context, req pipeline.Request, runID string) (*TestRun, error) {
	s := m.newSession(req.Fork)
	// A secret too short to mask fails here, before anything runs.
	masker, err := s.masker(ctx)
	if err != nil {
		return nil, err
	}
	n := nonce(runID)
	p, spec, err := pipeline.Prepare(ctx, s.container(), req, n)
	if err != nil {
		return nil, errors.New(masker.Mask(err.Error()))
	}
	res, err := pipeline.Test(ctx, p, spec, n, masker)
	if err != nil {
		return nil, errors.New(masker.Mask(err.Error()))
	}
	dir := dag.Directory()
	for _, f := range res.Files {
		dir = dir.WithNewFile(f.Name, f.Data)
	}
	run := &TestRun{ExitCode: res.Summary.ExitCode, Passed: res.Summary.Passed, Verdict: string(res.Summary.Verdict),
		Summary: masker.Mask(res.Summary.Text()), Results: dir}
	if err := res.Summary.Err(); err != nil {
		run.Failure = masker.Mask(err.Error())
	}
	return run, nil
}

// TestRun is a finished run of a stage shard or a test file.
type TestRun struct {
	// The runner's exit status as the engine recorded it (run_suite.py exits 255 when a file failed; 128+N for signal N).
	ExitCode int
	// Whether the run passed: the runner exited 0 and every planned file reported a pass.
	Passed bool
	// The verdict: passed, failed, timeout or inconsistent (the per-file outcomes contradict the exit status).
	Verdict string
	// The results for a person: one line per planned file.
	Summary string
	// The results folder miles-ci built: summary.json, junit.xml, run.log, plan.txt, status.log, exit-code, elapsed, step-summary.md, artifacts/.
	Results *dagger.Directory
	// +private
	Failure string
}

// Assert fails the call the way the run failed, naming the failed, timed-out
// and not-run files and the exit code; it returns nothing when the run passed.
func (r *TestRun) Assert() error {
	if r.Failure != "" {
		return errors.New(r.Failure)
	}
	return nil
}

// File selects a single registered test file to run alone (/rerun-test, rules §10).
// +cache="session"
func (m *MilesCi) File(
	ctx context.Context,
	// The repo-relative test file, e.g. tests/e2e/megatron/test_x.py.
	path string,
) (*FileRun, error) {
	f := &FileRun{Ci: m, Path: path}
	var err error
	if f.PullRequest, err = m.pullRequest(ctx, false); err != nil {
		return nil, err
	}
	if _, err := f.request(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// FileRun is one test file run alone in its stage's container.
type FileRun struct {
	// +private
	Ci *MilesCi
	// The repo-relative test file.
	Path string
	// +private
	PullRequest string
}

// request builds the file run's request.
func (f *FileRun) request(ctx context.Context) (pipeline.Request, error) {
	return withCheckout(ctx, f.Ci.Source, func(dir string) (pipeline.Request, error) {
		in, err := f.Ci.inputs(ctx, dir, f.PullRequest)
		if err != nil {
			return pipeline.Request{}, err
		}
		in.File = f.Path
		in.Python = containerPython{source: f.Ci.Source}
		return usecase.File(in)
	})
}

// Plan returns the file run's plan as JSON (`miles-ci file-plan --json`).
func (f *FileRun) Plan(ctx context.Context) (string, error) {
	req, err := f.request(ctx)
	if err != nil {
		return "", err
	}
	return jsonString(req.File)
}

// Spec returns the file run's container spec as JSON (`miles-ci file-run ... --dry-run --json`).
func (f *FileRun) Spec(ctx context.Context) (string, error) {
	req, err := f.request(ctx)
	if err != nil {
		return "", err
	}
	return specJSON(req)
}

// Container returns the file run's container, ready to run.
// +cache="session"
func (f *FileRun) Container(ctx context.Context) (*dagger.Container, error) {
	req, err := f.request(ctx)
	if err != nil {
		return nil, err
	}
	return f.Ci.container(ctx, req)
}

// Test runs the file as /rerun-test does and returns the results.
// +cache="never"
func (f *FileRun) Test(
	ctx context.Context,
	// Run id: calls with the same id share one run; without one every call runs anew.
	// +optional
	runId string,
) (*TestRun, error) {
	req, err := f.request(ctx)
	if err != nil {
		return nil, err
	}
	return f.Ci.test(ctx, req, runId)
}

// Release runs stages as release CI does: cadence release, with the
// dependency commits and CI image of a release-lock.json.
func (m *MilesCi) Release(
	ctx context.Context,
	// The release-lock.json (default: the checkout's); the flag is not --lock, which the dagger CLI takes.
	// +optional
	lockfile *dagger.File,
) (*Release, error) {
	if m.Pr != 0 {
		return nil, usecase.ErrReleasePR
	}
	what := "--lockfile"
	if lockfile == nil {
		lockfile, what = m.Source.File(deps.LockFileName), "the checkout's "+deps.LockFileName
	}
	text, err := readFile(ctx, lockfile, 64<<10, what)
	if err != nil {
		return nil, fmt.Errorf("%w; give --lockfile or run on a release branch", err)
	}
	if _, err := deps.ParseLock(deps.LockFileName, []byte(text)); err != nil {
		return nil, err
	}
	return &Release{Ci: m, Lock: text}, nil
}

// Release is a release run of Miles CI, pinned by a lockfile.
type Release struct {
	// +private
	Ci *MilesCi
	// +private
	Lock string
}

// Stage selects a stage of the release run (cadence release, no labels).
func (r *Release) Stage(
	ctx context.Context,
	// Stage (= suite) name, e.g. stage-c-4-gpu-h200.
	name string,
) (*Stage, error) {
	return (&Stage{Ci: r.Ci, Name: name, Cadence: string(policy.Release), ReleaseLock: r.Lock}).check(ctx)
}

// ReleaseLock returns a release-lock.json for a release branch: the SGLang
// and Megatron-LM branch heads resolved to commits now, and the CI image tag.
// +cache="never"
func (m *MilesCi) ReleaseLock(
	ctx context.Context,
	// The release branch, release/vX.Y.Z.
	branch string,
	// The SGLang branch to freeze.
	// +optional
	// +default="sglang-miles"
	sglangRef string,
	// The Megatron-LM branch to freeze.
	// +optional
	// +default="miles-main"
	megatronRef string,
	// The CI image tag (default: release-vX.Y.Z-ci from the branch).
	// +optional
	imageTag string,
) (*dagger.File, error) {
	tag, err := deps.ReleaseImageTag(branch)
	if err != nil {
		return nil, err
	}
	if imageTag == "" {
		imageTag = tag
	}
	commits, err := pipeline.ResolveBranches(ctx, m.newSession(false).container(), sglangRef, megatronRef, nonce(""))
	if err != nil {
		return nil, err
	}
	lock, err := deps.NewLock(deps.BranchCut{Branch: branch, SGLangCommit: commits.SGLang, MegatronCommit: commits.Megatron, ImageTag: imageTag})
	if err != nil {
		return nil, err
	}
	lock.SGLangBranch, lock.MegatronBranch = sglangRef, megatronRef
	text, err := lock.Format()
	if err != nil {
		return nil, err
	}
	return dag.File(deps.LockFileName, string(text)), nil
}

// jsonString renders v as miles-ci's JSON output.
func jsonString(v any) (string, error) {
	out, err := encode.JSON(v)
	return string(out), err
}

// specJSON builds a request's spec as JSON.
func specJSON(req pipeline.Request) (string, error) {
	spec, err := pipeline.Build(req)
	if err != nil {
		return "", err
	}
	return jsonString(spec)
}

// Stages returns, as JSON, the stage roster that applies to the source:
// backend, runners, shards, parallelism, needs and image of every CI stage,
// read from its workflows and CI tables (`miles-ci stages --repo DIR --json`).
// A source that is not a Miles checkout (no tests/) gives the built-in roster
// of rules §1 (`miles-ci stages --json`) and says so on stderr.
// +cache="session"
func (m *MilesCi) Stages(ctx context.Context) (string, error) {
	return withExport(ctx, m.Source, func(dir string) (string, error) {
		if _, err := policy.CheckCheckout(dir); err != nil {
			var ce *policy.CheckoutError
			if !errors.As(err, &ce) {
				return "", err
			}
			fmt.Fprint(os.Stderr, ghoutput.Annotation("notice", "", 0, "source "+ce.Problem+"; showing the built-in roster of rules §1"))
			return jsonString(policy.Roster())
		}
		tables, msgs, err := usecase.LoadTables(dir, "source")
		printMessages(msgs)
		if err != nil {
			return "", err
		}
		return jsonString(tables.Stages())
	})
}

// Plan returns, as JSON, what one suite shard runs, as run_suite.py --list-only
// shows it (`miles-ci plan --repo DIR ... --json`); with --all, every shard of
// every stage of the roster, as a JSON array (`miles-ci plan --all --json`).
// With with-pr, the pull request decides cadence and labels
// unless they are given, and with --all the stages its diff skips plan nothing.
// +cache="session"
func (m *MilesCi) Plan(
	ctx context.Context,
	// Hardware backend (required unless --all).
	// +optional
	hw Backend,
	// Suite (= stage) name, e.g. stage-a-cpu (required unless --all).
	// +optional
	suite string,
	// Plan every suite and every shard of the roster that applies to the checkout.
	// +optional
	all bool,
	// CI cadence (default regular).
	// +optional
	cadence Cadence,
	// Raw PR labels, e.g. run-ci-megatron.
	// +optional
	labels []string,
	// Include every known label, as a manual dispatch of a GPU stage does.
	// +optional
	matchAllLabels bool,
	// 0-based shard index; give it together with partitionSize (absent: not partitioned).
	// +optional
	partitionId *int,
	// Number of shards; give it together with partitionId (absent: not partitioned).
	// +optional
	partitionSize *int,
	// Keep running after a failed test.
	// +optional
	continueOnError bool,
	// Who plans: miles-ci (the default) or checkout (the checkout's own
	// run_suite.py --list-only, run in a Python 3.11 container).
	// +optional
	planner string,
) (string, error) {
	who, err := parsePlanner(planner)
	if err != nil {
		return "", err
	}
	in := usecase.PlanInputs{Shown: "source", All: all, Planner: who,
		Request: policy.PlanRequest{Cadence: policy.Regular, Labels: labels, MatchAllLabels: matchAllLabels, ContinueOnError: continueOnError},
		Given:   usecase.Given{Cadence: cadence != "", Labels: labels != nil}}
	if (partitionId == nil) != (partitionSize == nil) {
		return "", errors.New("--partition-id and --partition-size must be specified together")
	}
	switch {
	case all && (hw != "" || suite != "" || partitionSize != nil):
		return "", errors.New("--all plans every suite and shard; drop --hw, --suite and --partition-*")
	case !all && (hw == "" || suite == ""):
		return "", errors.New("--hw and --suite are required (or --all)")
	case !all:
		in.Request.HW = policy.Backend(hw)
		in.Request.Suite = suite
		if partitionSize != nil {
			in.Request.Partition = &policy.Partition{ID: *partitionId, Size: *partitionSize}
			if err := in.Request.Partition.Validate(); err != nil {
				return "", err
			}
		}
	}
	if cadence != "" {
		in.Request.Cadence = policy.Cadence(cadence)
	}
	if in.PR, err = m.pullRequestOf(ctx, all); err != nil {
		return "", err
	}
	return withCheckout(ctx, m.Source, func(dir string) (string, error) {
		in.Repo = dir
		in.Checkout = func() (*usecase.Checkout, error) { return checkout(dir, m.Source) }
		ans, err := usecase.Plan(ctx, in)
		printMessages(ans.Messages)
		if err != nil {
			return "", err
		}
		plans, err := ans.ReadPlans()
		if err != nil {
			return "", err
		}
		if all {
			return jsonString(plans)
		}
		return jsonString(plans[0])
	})
}

// Policy resolves cadence, labels, fast-fail and the skipped GPU stages from the
// trigger facts, as JSON (`miles-ci policy --event E ... --json`). With
// with-pr, the pull request is the trigger (event pull_request, its
// labels and changed files) for every fact not given here.
// +cache="session"
func (m *MilesCi) Policy(
	ctx context.Context,
	// GitHub event (required without with-pr or --cadence-override).
	// +optional
	event Event,
	// Cron expression of a scheduled run.
	// +optional
	schedule string,
	// The PR's label names as a JSON array, e.g. ["run-ci-megatron"].
	// +optional
	prLabelsJson string,
	// A called workflow's cadence input; it wins over the event.
	// +optional
	cadenceOverride Cadence,
	// Output of `git diff --name-status -z -M HEAD^1 HEAD` for a pull request (with --pr: instead of the PR's files).
	// +optional
	changedFiles *dagger.File,
	// Who resolves: miles-ci (the default) or checkout (the checkout's own
	// python -m tests.ci.ci_policy, run in a Python 3.11 container).
	// +optional
	planner string,
) (string, error) {
	if event == "" && cadenceOverride == "" && m.Pr == 0 {
		return "", errors.New("--event is required (or --cadence-override, or with-pr --number N)")
	}
	who, err := parsePlanner(planner)
	if err != nil {
		return "", err
	}
	req := usecase.PolicyRequest{
		Trigger:    policy.Trigger{Event: string(event), Schedule: schedule, PRLabelsJSON: prLabelsJson, CadenceOverride: string(cadenceOverride)},
		EventGiven: event != "", LabelsGiven: prLabelsJson != "", DiffGiven: changedFiles != nil}
	// The PR's changed files are needed unless a diff file was given.
	if req.PR, err = m.pullRequestOf(ctx, !req.DiffGiven); err != nil {
		return "", err
	}
	return withCheckout(ctx, m.Source, func(dir string) (string, error) {
		if changedFiles != nil {
			req.ReadDiff = func() ([]byte, string, error) { return readChangedFiles(ctx, changedFiles, dir+".changed-files") }
		}
		if who == usecase.PlannerCheckout {
			return checkoutPolicyOf(ctx, dir, m.Source, req)
		}
		// As `miles-ci policy` does: the checkout's tables, then on a pull
		// request the GPU stages its diff skips.
		tables, msgs, err := usecase.LoadTables(dir, "source")
		printMessages(msgs)
		if err != nil {
			return "", err
		}
		req.Repo, req.Tables = dir, tables
		ans, err := usecase.Policy(req)
		if err != nil {
			return "", err
		}
		printMessages(ans.Messages)
		return jsonString(ans.Outputs)
	})
}

// readChangedFiles reads the --changed-files File, exported to path (not read
// as a string: a diff is NUL-separated and need not be UTF-8), as `miles-ci
// policy` reads its file; the reason it is unusable names the argument, not
// the export path.
func readChangedFiles(ctx context.Context, f *dagger.File, path string) ([]byte, string, error) {
	if _, err := f.Export(ctx, path); err != nil {
		return nil, "", fmt.Errorf("export --changed-files: %w", err)
	}
	defer os.Remove(path)
	diff, unusable := usecase.ReadChangedFiles(path, "--changed-files")
	return diff, unusable, nil
}

// pullRequestOf is the pull request of --pr (nil without it), read once for
// one call; with files, its changed files too.
func (m *MilesCi) pullRequestOf(ctx context.Context, files bool) (*github.PR, error) {
	s, err := m.pullRequest(ctx, files)
	if err != nil || s == "" {
		return nil, err
	}
	return github.DecodePR(s)
}

// printMessages prints a use case's messages on stderr, as annotations.
// A function that prints them is +cache="session": a result the engine kept
// from an earlier session would come back without its messages.
func printMessages(msgs []usecase.Message) {
	for _, m := range msgs {
		fmt.Fprint(os.Stderr, ghoutput.Annotations(m.Level, m.Text))
	}
}
