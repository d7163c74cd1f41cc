// Package usecase holds the use cases both front ends call, the miles-ci
// command and the Dagger module, so the same inputs give the same answer:
// one request type per command, validated here, then one call. They are the
// questions (Plan, Policy, Explain, Stages, Image, Deps, Lint, Verify), one
// shard's run (Stage, File: what a front end is given turned into a
// stagerun.Request, and every roster lookup of a run) with what its results
// folder holds, and triage. The whole CI of an event is usecase/ci, and the
// runtime history's use cases are usecase/runhistory, which only the command
// imports.
package usecase

import (
	"errors"
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
)

// Inputs are the facts of one run, as flags or function arguments give them.
type Inputs struct {
	// Repo is the Miles checkout ("" = the current folder).
	Repo string
	// Stage is the stage (= suite) name of a stage run.
	Stage string
	// Shard is the shard of a sharded stage as every output numbers it, 1
	// to the stage's count (shard 2/4 is 2; Miles' 0-based
	// --auto-partition-id is one less); nil for an unsharded one.
	Shard *int
	// File is the test file of a single-file run (rules §10).
	File string

	// Cadence is the run's cadence ("" = regular).
	Cadence string
	// Labels are the raw PR labels passed to run_suite.py.
	Labels []string
	// MatchAllLabels passes --match-all-labels.
	MatchAllLabels bool
	// Event, Schedule and PRLabelsJSON are trigger facts that decide cadence
	// and labels the way the workflow does; they exclude Cadence and Labels.
	Event, Schedule, PRLabelsJSON string

	// PRBody is the pull request description (directives ci-sglang-pr,
	// ci-megatron-pr, ci-image-tag).
	PRBody string
	// SGLangInput, MegatronInput and ImageTag are the workflow_dispatch inputs.
	SGLangInput, MegatronInput, ImageTag string
	// Image, when set, is the image a workflow's image job decided (a ci
	// run's resolve-ci-image): the stage runs on it as it is.
	Image *deps.Image
	// PRNumber and HeadSHA name the tested change (GITHUB_COMMIT_NAME).
	PRNumber, HeadSHA string
	// Fork marks a pull request from a fork: no secrets.
	Fork bool
	// GitHub is the facts of the GitHub Actions run (GitHubFromArgs,
	// GitHubFromEnv); empty for a local run.
	GitHub stagerun.GitHubRun
	// Release is the lockfile of a release run (cadence release, its refs and image).
	Release *deps.Lock

	// GPUs is the --gpus value: all (""), none or device ids.
	GPUs string
	// VisibleDevices is CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES.
	VisibleDevices string
	// Models and Datasets say whether those data folders are given.
	Models, Datasets bool
	// TimeoutMinutes overrides a stage run's timeout (0 = the stage's default).
	TimeoutMinutes int
	// CacheRegistry is --cache-registry: the repository the prepared
	// dependency layers are shared through across hosts ("" = none).
	CacheRegistry string

	// PR is the pull request --pr named, read with its changed files: its
	// facts fill what Given says the caller left out; nil without --pr.
	PR *github.PR
	// Given names the facts the caller gave itself, which PR does not override.
	Given Given

	// Python runs the checkout's own tests/ci code when miles-ci cannot plan
	// a single-file run of it offline (nil: python3 on PATH).
	Python Interpreter
}

// Given names the facts a caller gave itself (a flag given, an argument set),
// so that a pull request's facts fill only the others. It is the one
// definition of "the caller gave this" for every request: the CLI sets a
// field when the flag is on the command line, the module when the argument
// is set (a list: not nil; a string: not "").
type Given struct {
	// Body: a PR body was given (--pr-body-file), even an empty one.
	Body bool
	// Cadence and Labels: --cadence (or --nightly) and --labels were given.
	// A list is given when the caller named it, even with no values (the
	// CLI's --labels alone; the module's labels argument set, not nil).
	Cadence, Labels bool
	// Number and HeadSHA: --pr-number and --head-sha were given.
	Number, HeadSHA bool
	// Event and PRLabels: --event and --pr-labels-json were given, so a pull
	// request does not override them.
	Event, PRLabels bool
	// Diff: --changed-files was given; it wins over a pull request's files.
	Diff bool
	// PR: a pull request was named (--pr N, with-pr --number N), before it is read.
	PR bool
	// PRImage: --pr-image-available was given (not read from the environment).
	PRImage bool
	// Repo: --repo was given.
	Repo bool
	// Schedule and Release: --schedule and --release-lock were given (not
	// read from the environment), before the lockfile is read.
	Schedule, Release bool
	// Hosts: --hosts was given, before its file is read.
	Hosts bool
	// History: --events or --as-of was given (the runtime history a run or
	// a what-if reads); Record: --record was given.
	History, Record bool
}

// Frontend is how a front end spells what usecase's messages name, so each
// message is written once.
type Frontend struct {
	// PR is how a pull request is named: "--pr N", "with-pr --number N".
	PR string
	// EnvFallback says the flags fall back to the workflow's env vars.
	EnvFallback bool
}

// The two front ends.
var (
	CLI    = Frontend{PR: "--pr N", EnvFallback: true}
	Module = Frontend{PR: "with-pr --number N"}
)

// Tables reads the CI tables of the checkout in.Repo (its roster, suites,
// labels and crons; the built-in ones where it holds none).
func Tables(in Inputs) (*policy.Tables, error) { return policy.LoadTables(in.Repo) }

// LookupStage returns a stage of the checkout's roster by name, or an error
// listing the stages miles-ci runs.
func LookupStage(t *policy.Tables, name string) (policy.Stage, error) {
	st, ok := t.Stage(name)
	if ok && !st.External && len(st.RunsOn) > 0 {
		return st, nil
	}
	var names []string
	for _, s := range Stages(t) {
		names = append(names, s.Name)
	}
	if ok && t.IsPoolSuite(name) {
		return policy.Stage{}, fmt.Errorf("stage %s is planned with the B200 pool, one job per file (job %s, rules §11.8): run --stage %s --batch N, the batches of miles-ci plan --pool", name, st.Job, poolJobName(t, st))
	}
	if ok {
		return policy.Stage{}, fmt.Errorf("stage %s runs outside miles-ci (the external MI350 nightly); pick one of %v", name, names)
	}
	if len(names) == 0 {
		// An old Miles checkout (suites named before the stage roster of rules §1)
		// leaves no stage at all: say why rather than offer an empty list.
		var suites []string
		for _, b := range policy.Backends() {
			suites = append(suites, t.Suites.Of(b)...)
		}
		return policy.Stage{}, fmt.Errorf("unknown stage %q: the checkout has no stage miles-ci can run, since none of its suites %v (%s) is a stage of the roster (%s); "+
			"its tests/ci predates the stage jobs of rules §1, so check out a Miles commit that has them",
			name, suites, t.Origin(policy.TableSuites), t.Origin(policy.TableRoster))
	}
	return policy.Stage{}, &UnknownError{What: "stage", Name: name, Known: names}
}

// labelsFrom names where a stage run's labels came from, for a warning.
func labelsFrom(in Inputs) string {
	switch {
	case in.Event != "" && in.PRLabelsJSON != "":
		return "--pr-labels-json"
	case len(in.Labels) > 0 && (in.PR == nil || in.Given.Labels):
		return "--labels"
	}
	return PRLabelsFrom
}

// Stages lists the stages miles-ci runs, in roster order.
func Stages(t *policy.Tables) []policy.Stage {
	var out []policy.Stage
	for _, s := range t.Stages() {
		if !s.External && len(s.RunsOn) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// suite is the cadence and raw labels a stage run passes to run_suite.py.
func suite(in Inputs, tables *policy.Tables) (policy.Cadence, []string, error) {
	if in.Release != nil {
		if in.Cadence != "" && in.Cadence != string(policy.Release) || len(in.Labels) > 0 || in.Event != "" {
			return "", nil, errors.New("a release run has cadence release and no labels; drop --cadence, --labels and --event")
		}
		return policy.Release, []string{}, nil
	}
	if in.Event != "" {
		if in.Cadence != "" || len(in.Labels) > 0 {
			return "", nil, errors.New("give either the trigger facts (--event ...) or --cadence and --labels, not both: the event decides cadence and labels")
		}
		wp, err := policy.ResolveTrigger(policy.Trigger{Event: in.Event, Schedule: in.Schedule, PRLabelsJSON: in.PRLabelsJSON, Tables: tables})
		if err != nil {
			return "", nil, err
		}
		return wp.Cadence, wp.RawLabels, nil
	}
	if in.Schedule != "" || in.PRLabelsJSON != "" {
		return "", nil, errors.New("--schedule and --pr-labels-json are trigger facts; give --event with them")
	}
	if in.PR != nil {
		// The pull request decides cadence and labels as its workflow run
		// does, unless the caller named them.
		wp, err := PRPolicy(in.PR, tables)
		if err != nil {
			return "", nil, err
		}
		r := fillFromPR(policy.PlanRequest{Cadence: policy.Cadence(in.Cadence), Labels: in.Labels}, in.Given, wp.Cadence, wp.RawLabels)
		in.Cadence, in.Labels = string(r.Cadence), r.Labels
	}
	cadence := policy.Regular
	if in.Cadence != "" {
		c, err := policy.ParseCadence(in.Cadence)
		if err != nil {
			return "", nil, err
		}
		cadence = c
	}
	return cadence, append([]string{}, in.Labels...), nil
}

func planRequest(st policy.Stage, shards int, cadence policy.Cadence, labels []string, matchAll bool, shard int) policy.PlanRequest {
	req := policy.PlanRequest{HW: st.Backend, Suite: st.Name, Cadence: cadence, Labels: labels, MatchAllLabels: matchAll}
	if shards > 1 {
		req.Partition = &policy.Partition{ID: shard, Size: shards}
	}
	return req
}

// CheckShard checks a shard, numbered as every output prints it (shard
// 2/4 is 2, Miles' --auto-partition-id 1), against the stage's shard count.
func CheckShard(st policy.Stage, shards int, shard *int) error {
	switch {
	case shards > 1 && shard == nil:
		return fmt.Errorf("stage %s runs in %d shards; give the shard, 1 to %d, as every output numbers them (shard 2/%d is 2)", st.Name, shards, shards, shards)
	case shards > 1 && (*shard < 1 || *shard > shards):
		return fmt.Errorf("stage %s has shards 1 to %d, as every output numbers them (shard 1/%d to %d/%d); %d is not one of them", st.Name, shards, shards, shards, shards, *shard)
	case shards <= 1 && shard != nil && *shard != 1:
		return fmt.Errorf("stage %s is not sharded; give shard 1 or none", st.Name)
	}
	return nil
}

// Stage builds the request of one stage shard.
func Stage(in Inputs) (stagerun.Request, error) {
	_, reqs, err := planStage(in, func(st policy.Stage, shards int) ([]int, error) {
		if err := CheckShard(st, shards, in.Shard); err != nil {
			return nil, err
		}
		if in.Shard != nil {
			return []int{*in.Shard - 1}, nil
		}
		return []int{0}, nil
	})
	if err != nil {
		return stagerun.Request{}, err
	}
	return reqs[0], nil
}

// planStage plans a stage once: it reads the checkout's tables and registry
// and builds the request of each shard ids picks (from the stage and its
// shard count). Stage picks one shard, PlanStage every one.
func planStage(in Inputs, ids func(st policy.Stage, shards int) ([]int, error)) (int, []stagerun.Request, error) {
	in, err := withPR(in)
	if err != nil {
		return 0, nil, err
	}
	tables, err := Tables(in)
	if err != nil {
		return 0, nil, err
	}
	return PlanStageOf(in, tables, tables.LoadRegistry, ids)
}

// PlanStageOf is planStage on tables already read, with the registry
// registry looks up (a ci run reads both once for all its stages).
func PlanStageOf(in Inputs, tables *policy.Tables, registry deps.Lookup, ids func(st policy.Stage, shards int) ([]int, error)) (int, []stagerun.Request, error) {
	plannings.Add(1)
	st, err := LookupStage(tables, in.Stage)
	if err != nil {
		return 0, nil, err
	}
	if in.File != "" {
		return 0, nil, errors.New("a stage run takes no test file; use a single-file run for one file")
	}
	cadence, labels, err := suite(in, tables)
	if err != nil {
		return 0, nil, err
	}
	labelNotes := LabelWarnings(tables, labels, labelsFrom(in))
	shards := st.ShardsFor(cadence)
	picked, err := ids(st, shards)
	if err != nil {
		return 0, nil, err
	}
	reg, err := registry(in.Repo)
	var ahead *policy.AheadError
	if err != nil && !errors.As(err, &ahead) {
		return 0, nil, err
	}
	var reqs []stagerun.Request
	for _, id := range picked {
		req, err := shardRequest(in, tables, reg, ahead, st, shards, cadence, labels, id)
		if err != nil {
			return 0, nil, err
		}
		for _, m := range labelNotes {
			req.Notes = append(req.Notes, m.Text)
		}
		reqs = append(reqs, req)
	}
	return shards, reqs, nil
}

// shardRequest is the request of shard id of a stage planned by planStage;
// with ahead (a checkout ahead of miles-ci, reg then nil) the container's own
// --list-only plans it.
func shardRequest(in Inputs, tables *policy.Tables, reg *policy.Registry, ahead *policy.AheadError, st policy.Stage, shards int, cadence policy.Cadence, labels []string, id int) (stagerun.Request, error) {
	if ahead != nil {
		req := containerPlanned(st, shards, cadence, labels, in.MatchAllLabels, id, ahead)
		req.Steps, req.TimeoutMinutes = tables.RunSteps, in.TimeoutMinutes
		return finish(in, req, st.Backend)
	}
	plan, err := policy.BuildPlan(reg, planRequest(st, shards, cadence, labels, in.MatchAllLabels, id))
	if err != nil {
		return stagerun.Request{}, err
	}
	req := stagerun.Request{Stage: st, Plan: plan, Labels: labels, MatchAllLabels: in.MatchAllLabels, Steps: tables.RunSteps, TimeoutMinutes: in.TimeoutMinutes}
	if in.PR != nil {
		note, err := skippedOnPR(reg, in.PR, st)
		if err != nil {
			return stagerun.Request{}, err
		}
		if note != "" {
			req.Notes = append(req.Notes, note)
		}
	}
	return finish(in, req, st.Backend)
}

// File builds the request of a single-file run (rules §10).
func File(in Inputs) (stagerun.Request, error) {
	plannings.Add(1)
	if err := checkFileInputs(in); err != nil {
		return stagerun.Request{}, err
	}
	in, err := withPR(in)
	if err != nil {
		return stagerun.Request{}, err
	}
	tables, err := Tables(in)
	if err != nil {
		return stagerun.Request{}, err
	}
	return fileOf(in, tables, tables.LoadRegistry)
}

// checkFileInputs refuses what a single-file run does not take.
func checkFileInputs(in Inputs) error {
	if in.Stage != "" || in.Shard != nil || in.Cadence != "" || len(in.Labels) > 0 || in.MatchAllLabels || in.Event != "" {
		return errors.New("a single-file run takes no stage, shard, cadence, labels or event: the file's registration decides where it runs")
	}
	if in.Release != nil {
		return errors.New("a single-file run does not take a release lockfile")
	}
	return nil
}

// fileOf is File on tables already read, with the registry registry loads
// (a ci run's pool jobs read both once for all their files).
func fileOf(in Inputs, tables *policy.Tables, registry deps.Lookup) (stagerun.Request, error) {
	fp, err := deps.PlanFile(deps.FileRequest{Root: in.Repo, File: in.File, ImageTag: in.ImageTag, Image: in.Image, PRBody: in.PRBody, Tables: tables}, registry)
	var notes []string
	if ahead := (*policy.AheadError)(nil); errors.As(err, &ahead) {
		// A checkout ahead of miles-ci still runs a file: its own file_run plans it.
		if fp, notes, err = checkoutFilePlan(in, ahead); err != nil {
			return stagerun.Request{}, err
		}
	}
	if err != nil {
		return stagerun.Request{}, err
	}
	st, err := fileStage(tables, fp)
	if err != nil {
		return stagerun.Request{}, err
	}
	req := stagerun.Request{Stage: st, File: &fp, Notes: notes, Steps: tables.RunSteps}
	if fp.ContainerImage != "" {
		req.Image = deps.Image{Image: fp.ContainerImage, Tag: tagOf(fp.ContainerImage), Source: fp.ImageSource}
	}
	return finish(in, req, fp.HW)
}

// tagOf is the tag of repo:tag.
func tagOf(image string) string { return image[strings.LastIndex(image, ":")+1:] }

// finish adds the image, dependency and runtime decisions to a request.
func finish(in Inputs, req stagerun.Request, hw policy.Backend) (stagerun.Request, error) {
	req, err := WithDevices(req, in.GPUs, in.VisibleDevices)
	if err != nil {
		return stagerun.Request{}, err
	}
	req.Models, req.Datasets = in.Models, in.Datasets
	req.HeadSHA, req.PRNumber, req.Fork = in.HeadSHA, in.PRNumber, in.Fork
	if err := in.GitHub.Check(); err != nil {
		return stagerun.Request{}, fmt.Errorf("GitHub run facts: %w", err)
	}
	req.GitHub = in.GitHub
	if in.CacheRegistry != "" {
		if err := stagerun.CheckCacheRegistry(in.CacheRegistry); err != nil {
			return stagerun.Request{}, err
		}
		req.CacheRegistry = in.CacheRegistry
	}

	din := deps.Inputs{Backend: hw, PRBody: in.PRBody, SGLangInput: in.SGLangInput, MegatronInput: in.MegatronInput}
	switch {
	case in.Release != nil:
		if in.PRBody != "" || in.SGLangInput != "" || in.MegatronInput != "" || in.ImageTag != "" {
			return stagerun.Request{}, errors.New("a release run takes its refs and image from the lockfile; drop the PR body, dependency inputs and image tag")
		}
		din = deps.Inputs{Backend: hw, Lock: in.Release}
	case !policy.ProfileOf(hw).BakedDeps:
		// ROCm images bake their own dependencies and never read the lockfile.
		root := in.Repo
		if root == "" {
			root = "."
		}
		if din.Lock, err = deps.ReadLock(root); err != nil {
			return stagerun.Request{}, err
		}
	}
	if req.Deps, err = deps.Resolve(din); err != nil {
		return stagerun.Request{}, err
	}
	if req.File == nil {
		if req.Image, err = stageImage(in, hw); err != nil {
			return stagerun.Request{}, err
		}
	}
	return req, nil
}

// WithDevices gives a request the GPUs (--gpus: all, none or device ids)
// and visible devices (--visible-devices) it runs on, each read by the one
// grammar of device ids (package device) and normalised there.
func WithDevices(req stagerun.Request, gpus, visible string) (stagerun.Request, error) {
	switch gpus {
	case "", "all":
		req.GPUs = stagerun.GPUs{}
	case "none":
		req.GPUs = stagerun.GPUs{None: true}
	default:
		ids, err := device.ParseSet(gpus)
		if err != nil {
			return stagerun.Request{}, fmt.Errorf("--gpus %q: %w; give all, none, or ids such as 0,1 (or GPU-<uuid>)", gpus, err)
		}
		req.GPUs = stagerun.GPUs{Devices: ids}
	}
	req.VisibleDevices = nil
	if visible != "" {
		ids, err := device.ParseSet(visible)
		if err != nil {
			return stagerun.Request{}, fmt.Errorf("--visible-devices %q: %w; give the GPU ids the run may see, such as 4,5", visible, err)
		}
		req.VisibleDevices = ids
	}
	return req, nil
}

// stageImage is the image of a stage run (rules §6).
func stageImage(in Inputs, hw policy.Backend) (deps.Image, error) {
	switch p := policy.ProfileOf(hw); {
	case p.StageImage != "":
		return deps.Image{Image: p.StageImage, Tag: tagOf(p.StageImage), Source: deps.FromDefault}, nil
	case in.Image != nil:
		return *in.Image, nil
	case in.Release != nil && p.PRImageTag:
		return deps.ReleaseImage(*in.Release)
	case !p.PRImageTag:
		return deps.ResolveImage(deps.ImageInputs{Backend: hw, InputTag: in.ImageTag})
	}
	return deps.ResolveImage(deps.ImageInputs{Backend: hw, InputTag: in.ImageTag, PRBody: in.PRBody})
}
