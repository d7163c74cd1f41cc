// Package workflows generates GitHub Actions workflows equivalent to Miles'
// pr-test.yml (CPU and CUDA stages) and pr-test-rocm.yml (the ROCm stage) job
// graphs, whose stage jobs call the miles-ci Dagger module (`dagger call ...
// stage ... shard ... test`, then `assert`) instead of run_suite.py. The job
// graph comes from the roster the caller passes: policy, image and deps jobs,
// one matrix job per stage with its needs, runners, shards and max-parallel,
// the fast-fail gate and the skipped-stage gate of rules §1, §3 and §4.
//
// It is pure: Generate returns the files' bytes, built as yaml.v3 node trees.
package workflows

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
)

// Options say which miles-ci the generated workflows call.
type Options struct {
	// Ref is the miles-ci version (a tag, branch or commit) whose Dagger
	// module and CLI the workflows run, e.g. v0.1.0.
	Ref string
	// DaggerVersion is the Dagger CLI the stage jobs install.
	DaggerVersion string
	// GoVersion is the Go toolchain that runs the miles-ci CLI.
	GoVersion string
}

// DefaultOptions are the options of `miles-ci workflows` without flags.
var DefaultOptions = Options{Ref: "main", DaggerVersion: "0.21.8", GoVersion: "1.26"}

// File is one generated workflow.
type File struct {
	// Name is the file name, e.g. pr-test.yml.
	Name string
	// Data is the YAML text.
	Data []byte
}

// modulePath is the Go module (and Dagger module) of miles-ci.
const modulePath = "github.com/radixark/miles-ci"

// workflow describes one generated file and how its image and policy jobs
// are called; it holds the stages of the backends whose profile names it as
// their PR workflow.
type workflow struct {
	file, name, concurrency string
	imageBackend            policy.Backend
	dispatchInputs          []input
	callInputs              []input
	imageTagEnv             string
}

type input struct{ name, description, def string }

var (
	cudaWorkflow = workflow{
		file: "pr-test.yml", name: "PR Test", concurrency: "pr-test", imageBackend: policy.CUDA,
		dispatchInputs: []input{
			{"ci_megatron_pr", "Megatron-LM PR (#N), branch or commit (empty: release-lock.json if present, else miles-main)", ""},
			{"ci_sglang_pr", "SGLang PR (#N), branch or commit (empty: release-lock.json if present, else sglang-miles)", ""},
			{"ci_image_tag", "radixark/miles image tag (empty: pr-<N>, the PR body's ci-image-tag:, else dev)", ""},
		},
		callInputs: []input{
			{"cadence", "Explicit CI cadence: regular, nightly, weekly or release", "release"},
			{"image_tag", "radixark/miles image tag to run the suites in, e.g. the release lockfile's ci_image_tag", ""},
		},
		imageTagEnv: "${{ inputs.image_tag || github.event.inputs.ci_image_tag || '' }}",
	}
	rocmWorkflow = workflow{
		file: "pr-test-rocm.yml", name: "PR Test (ROCm)", concurrency: "pr-test-rocm", imageBackend: policy.ROCM,
		dispatchInputs: []input{
			{"ci_image_tag", "rocm/sgl-dev image tag (empty: miles-rocm720-mi35x)", ""},
			{"ci_megatron_pr", "Megatron-LM PR (#N), branch or commit to install over the image's copy (empty: keep it)", ""},
			{"ci_sglang_pr", "SGLang PR (#N), branch or commit to install over the image's copy (empty: keep it)", ""},
		},
		callInputs: []input{
			{"cadence", "Explicit CI cadence: regular, nightly, weekly or release", "weekly"},
		},
		imageTagEnv: "${{ github.event.inputs.ci_image_tag || '' }}",
	}
)

// helperJobs are the jobs a stage may need besides other stages, in the order
// they are written. A roster read from Miles' workflows names them
// resolve-ci-policy, resolve-ci-image and resolve-ci-deps; the built-in one
// policy, image and deps. The generated workflows call them by the short name.
var helperJobs = []string{"policy", "image", "deps"}

// helperRole returns the short name of a helper job need, if it is one.
func helperRole(need string) (string, bool) {
	for _, h := range helperJobs {
		if need == h || need == "resolve-ci-"+h {
			return h, true
		}
	}
	return "", false
}

// needsOf is a stage's needs with helper jobs under their short names.
func needsOf(st policy.Stage) []string {
	out := make([]string, len(st.Needs))
	for i, n := range st.Needs {
		if h, ok := helperRole(n); ok {
			n = h
		}
		out[i] = n
	}
	return out
}

// The shapes of what Generate writes into a workflow from its options and the
// roster: each must read as what it is, or the workflow would be broken (or
// a stage's skipped-stages gate, which quotes the stage, would be lost).
var (
	daggerRelease = lazyre.New(`^v?[0-9]+\.[0-9]+\.[0-9]+$`)
	goVersion     = lazyre.New(`^[0-9]+\.[0-9]+(\.([0-9]+|x))?$`)
	jobID         = lazyre.New(`^[A-Za-z_][A-Za-z0-9_-]*$`)
)

// Generate returns pr-test.yml and pr-test-rocm.yml for a roster, and the
// comment gateway's comment-ci-command.yml.
func Generate(roster []policy.Stage, o Options) ([]File, error) {
	if o.Ref == "" || strings.ContainsAny(o.Ref, " \t\n'\"$`\\") || strings.HasPrefix(o.Ref, "-") {
		return nil, fmt.Errorf("--ref %q is not a miles-ci version; give a tag, branch or commit, e.g. main", o.Ref)
	}
	if !daggerRelease.MatchString(o.DaggerVersion) {
		return nil, fmt.Errorf("--dagger-version %q is not a Dagger release; give one like %s", o.DaggerVersion, DefaultOptions.DaggerVersion)
	}
	if !goVersion.MatchString(o.GoVersion) {
		return nil, fmt.Errorf("--go-version %q is not a Go version setup-go reads; give one like 1.26, 1.26.x or 1.26.1", o.GoVersion)
	}
	for _, st := range roster {
		if !st.External && !jobID.MatchString(st.Name) {
			return nil, fmt.Errorf("stage %q cannot be a GitHub Actions job id (letters, digits, - and _, starting with a letter or _); rename its job and suite", st.Name)
		}
	}
	var files []File
	for _, w := range []workflow{cudaWorkflow, rocmWorkflow} {
		var stages []policy.Stage
		for _, st := range roster {
			if !st.External && path.Base(policy.ProfileOf(st.Backend).PRWorkflow) == w.file {
				stages = append(stages, st)
			}
		}
		if len(stages) == 0 {
			continue
		}
		doc, err := w.document(stages, roster, o)
		if err != nil {
			return nil, err
		}
		data, err := encode(doc)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", w.file, err)
		}
		files = append(files, File{Name: w.file, Data: data})
	}
	comment, err := commentWorkflow(o)
	if err != nil {
		return nil, err
	}
	return append(files, comment), nil
}

// encode writes a workflow document as YAML, indented by 2.
func encode(doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (w workflow) document(stages, roster []policy.Stage, o Options) (*yaml.Node, error) {
	jobs := mapping()
	need := map[string]bool{}
	for _, st := range stages {
		for _, n := range needsOf(st) {
			need[n] = true
		}
	}
	// Every stage reads the policy's outputs, so the policy job is always there.
	need["policy"] = true
	// Helper jobs first, in a fixed order; then the stages in roster order.
	for _, h := range helperJobs {
		if !need[h] {
			continue
		}
		switch h {
		case "policy":
			add(jobs, h, w.policyJob(o))
		case "image":
			add(jobs, h, w.imageJob(o))
		case "deps":
			add(jobs, h, w.depsJob(o))
		}
	}
	for _, st := range stages {
		for _, n := range needsOf(st) {
			if _, ok := helperRole(n); ok {
				continue
			}
			if !slices.ContainsFunc(stages, func(s policy.Stage) bool { return s.Name == n }) {
				return nil, fmt.Errorf("stage %s needs %q, which is neither a helper job (policy, image, deps) nor a stage of %s; fix the roster", st.Name, n, w.file)
			}
		}
		if st.Shards < 1 {
			return nil, fmt.Errorf("stage %s has %d shards; a stage of %s needs at least one", st.Name, st.Shards, w.file)
		}
		add(jobs, st.Name, w.stageJob(st, o))
	}

	on := mapping(
		kv("pull_request", mapping(kv("types", flow("opened", "synchronize", "reopened", "ready_for_review", "labeled", "unlabeled", "closed")))),
		kv("schedule", seq(mapping(kv("cron", quoted("0 15 * * 0-5"))), mapping(kv("cron", quoted("0 15 * * 6"))))),
		kv("workflow_dispatch", mapping(kv("inputs", inputs(w.dispatchInputs, false)))),
		kv("workflow_call", mapping(kv("inputs", inputs(append([]input{{"ref", "Git ref (branch, tag or SHA) to test, e.g. release/v0.3.0", ""}}, w.callInputs...), true)))),
	)
	root := mapping(
		kvs("name", w.name),
		kv("on", on),
		kv("permissions", mapping(kvs("contents", "read"))),
		kv("concurrency", mapping(
			kvs("group", w.concurrency+"-${{ github.event.pull_request.number || github.event.schedule || inputs.ref || github.run_id }}"),
			kv("cancel-in-progress", boolean(true)),
		)),
		kv("env", mapping(
			kvs("MILES_CI_MODULE", modulePath+"@"+o.Ref),
			kvs("MILES_CI", modulePath+"/cmd/miles-ci@"+o.Ref),
			kv("DAGGER_VERSION", quoted(o.DaggerVersion)),
		)),
		kv("jobs", jobs),
	)
	root.HeadComment = fmt.Sprintf("Code generated by `miles-ci workflows`; DO NOT EDIT.\n"+
		"The job graph of Miles' %s (stages, shards, needs, gates) calling the miles-ci Dagger module.", w.file)
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}, nil
}

func inputs(list []input, call bool) *yaml.Node {
	m := mapping()
	for _, in := range list {
		required := call && in.name == "ref"
		fields := []pair{kvs("description", in.description), kv("required", boolean(required)), kvs("type", "string")}
		if !required {
			fields = append(fields, kv("default", quoted(in.def)))
		}
		add(m, in.name, mapping(fields...))
	}
	return m
}

// checkout checks out the tested ref: the called workflow's ref, else the
// triggering commit. The token is not kept in the checkout.
func checkout(depth int) *yaml.Node {
	with := []pair{kvs("ref", "${{ inputs.ref || '' }}"), kv("persist-credentials", boolean(false))}
	if depth > 0 {
		with = append(with, kv("fetch-depth", integer(depth)))
	}
	return mapping(kvs("uses", "actions/checkout@v4"), kv("with", mapping(with...)))
}

func setupGo(o Options) *yaml.Node {
	return mapping(kvs("uses", "actions/setup-go@v5"), kv("with", mapping(kv("go-version", quoted(o.GoVersion)), kv("cache", boolean(false)))))
}

// notClosed keeps a closed PR's run to its cancelling concurrency group.
const notClosed = "github.event.action != 'closed'"

func (w workflow) policyJob(o Options) *yaml.Node {
	return mapping(
		kvs("name", "resolve-ci-policy"),
		kvs("if", notClosed),
		kvs("runs-on", "ubuntu-latest"),
		kv("outputs", mapping(
			kvs("cadence", "${{ steps.resolve.outputs.cadence }}"),
			kvs("raw_labels", "${{ steps.resolve.outputs.raw_labels }}"),
			kvs("bypass_fastfail", "${{ steps.resolve.outputs.bypass_fastfail }}"),
			kvs("skipped_stages", "${{ steps.resolve.outputs.skipped_stages }}"),
		)),
		kv("steps", seq(
			checkout(2),
			mapping(
				kvs("name", "Collect the PR's changed files"),
				kvs("if", "github.event_name == 'pull_request'"),
				kv("run", block(
					`if ! git diff --name-status -z -M HEAD^1 HEAD > "$RUNNER_TEMP/changed-files.z"; then`,
					`  rm -f "$RUNNER_TEMP/changed-files.z"`,
					`  echo "::warning::cannot compute the PR diff; no GPU stage is skipped"`,
					`fi`,
				)),
			),
			setupGo(o),
			mapping(
				kvs("name", "Resolve the CI policy"),
				kvs("id", "resolve"),
				kv("env", mapping(
					kvs("EVENT_NAME", "${{ github.event_name }}"),
					kvs("SCHEDULE", "${{ github.event.schedule || '' }}"),
					kvs("PR_LABELS_JSON", "${{ toJSON(github.event.pull_request.labels.*.name) }}"),
					kvs("CADENCE_OVERRIDE", "${{ inputs.cadence || '' }}"),
					kvs("CHANGED_FILES_PATH", "${{ runner.temp }}/changed-files.z"),
				)),
				kv("run", str(`go run "$MILES_CI" policy --repo .`)),
			),
		)),
	)
}

func (w workflow) imageJob(o Options) *yaml.Node {
	env := []pair{kvs("INPUT_CI_IMAGE_TAG", w.imageTagEnv)}
	if policy.ProfileOf(w.imageBackend).PRImageTag {
		env = append(env, kvs("PR_BODY", "${{ github.event.pull_request.body || '' }}"), kvs("PR_NUMBER", "${{ github.event.pull_request.number || '' }}"))
	}
	return mapping(
		kvs("name", "resolve-ci-image"),
		kv("needs", flow("policy")),
		kvs("runs-on", "ubuntu-latest"),
		kv("outputs", mapping(kvs("container_image", "${{ steps.resolve.outputs.container_image }}"))),
		kv("steps", seq(
			setupGo(o),
			mapping(
				kvs("name", "Resolve the CI image"),
				kvs("id", "resolve"),
				kv("env", mapping(env...)),
				kv("run", str(fmt.Sprintf(`go run "$MILES_CI" image --backend %s`, w.imageBackend))),
			),
		)),
	)
}

func (w workflow) depsJob(o Options) *yaml.Node {
	return mapping(
		kvs("name", "resolve-dependency-refs"),
		kv("needs", flow("policy")),
		kvs("runs-on", "ubuntu-latest"),
		kv("outputs", mapping(
			kvs("skip_dependency_install", "${{ steps.resolve.outputs.skip_dependency_install }}"),
			kvs("ci_megatron_pr", "${{ steps.resolve.outputs.ci_megatron_pr }}"),
			kvs("ci_sglang_pr", "${{ steps.resolve.outputs.ci_sglang_pr }}"),
		)),
		kv("steps", seq(
			setupGo(o),
			mapping(
				kvs("name", "Resolve the dependency refs"),
				kvs("id", "resolve"),
				kv("env", mapping(
					kvs("PR_BODY", "${{ github.event.pull_request.body || '' }}"),
					kvs("INPUT_SGLANG_PR", "${{ github.event.inputs.ci_sglang_pr || '' }}"),
					kvs("INPUT_MEGATRON_PR", "${{ github.event.inputs.ci_megatron_pr || '' }}"),
				)),
				kv("run", str(fmt.Sprintf(`go run "$MILES_CI" deps --backend %s`, w.imageBackend))),
			),
		)),
	)
}

// secretFlags are the module's with-secrets flags of the secrets a stage
// passes (each backend profile's Secrets, rules §9); the environment
// variable that carries a secret has its name.
var secretFlags = map[string]string{
	policy.SecretHF:    "--hf-token",
	policy.SecretWandb: "--wandb-api-key",
	policy.SecretNeon:  "--neon-database-url",
}

// stageCondition is the job-level gate of a stage: its helper jobs passed,
// the policy did not skip it (PR GPU stages), and stage-a-cpu passed unless
// bypass_fastfail (fast-fail gated stages).
func stageCondition(st policy.Stage) []string {
	var conds []string
	for _, n := range needsOf(st) {
		if n == "stage-a-cpu" && st.FastFailGated {
			continue
		}
		conds = append(conds, fmt.Sprintf("needs.%s.result == 'success'", n))
	}
	if st.SkipGated {
		conds = append(conds, fmt.Sprintf("!contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), '%s')", st.Name))
	}
	if st.FastFailGated {
		conds = append(conds, "(needs.stage-a-cpu.result == 'success' || needs.policy.outputs.bypass_fastfail == 'true')")
	}
	return conds
}

func (w workflow) stageJob(st policy.Stage, o Options) *yaml.Node {
	p := policy.ProfileOf(st.Backend)
	needs := needsOf(st)
	if !slices.Contains(needs, "policy") {
		needs = append([]string{"policy"}, needs...) // the stage reads the policy's outputs
	}
	job := mapping(kv("needs", flow(needs...)))
	if st.SkipGated || st.FastFailGated {
		// always() lets a gated stage decide for itself once stage-a-cpu failed;
		// !cancelled() still stops it when the run is cancelled.
		lines := []string{"always() && !cancelled() &&"}
		conds := stageCondition(st)
		for i, c := range conds {
			if i < len(conds)-1 {
				c += " &&"
			}
			lines = append(lines, c)
		}
		add(job, "if", block(lines...))
	}
	if len(st.RunsOn) == 1 {
		add(job, "runs-on", str(st.RunsOn[0]))
	} else {
		add(job, "runs-on", flow(st.RunsOn...))
	}
	add(job, "strategy", mapping(
		kv("fail-fast", boolean(false)),
		kv("max-parallel", maxParallel(st)),
		kv("matrix", mapping(kv("shard", shardMatrix(st)))),
	))

	env := []pair{
		kvs("STAGE", st.Name),
		kvs("SHARD", "${{ matrix.shard }}"),
		kvs("CADENCE", "${{ needs.policy.outputs.cadence }}"),
		kvs("RAW_LABELS", "${{ needs.policy.outputs.raw_labels }}"),
		kvs("EVENT_NAME", "${{ github.event_name }}"),
		kvs("PR_BODY", "${{ github.event.pull_request.body || '' }}"),
		kvs("PR_NUMBER", "${{ github.event.pull_request.number || '' }}"),
		kvs("HEAD_SHA", "${{ github.event.pull_request.head.sha || github.sha }}"),
		kvs("FORK", "${{ github.event_name == 'pull_request' && github.event.pull_request.head.repo.full_name != github.repository }}"),
		kvs("SGLANG_PR", "${{ github.event.inputs.ci_sglang_pr || '' }}"),
		kvs("MEGATRON_PR", "${{ github.event.inputs.ci_megatron_pr || '' }}"),
		kvs("RUN_ID", "${{ github.run_id }}-${{ github.run_attempt }}-${{ matrix.shard }}"),
	}
	if slices.Contains(needs, "image") {
		env = append(env, kvs("CONTAINER_IMAGE", "${{ needs.image.outputs.container_image }}"))
	}
	for _, s := range p.Secrets {
		env = append(env, kvs(s, "${{ secrets."+s+" }}"))
	}

	// The module's constructor takes the checkout and the GPUs; the rest comes
	// in its chained facets (with-pull-request, with-dispatch, with-data,
	// with-secrets, with-github-env), each an array so an empty one adds nothing.
	script := []string{
		"set -euo pipefail",
		`printf '%s' "$PR_BODY" > "$RUNNER_TEMP/pr-body.md"`,
		`module=(-m "$MILES_CI_MODULE" --source .)`,
		`pr=(with-pull-request --body-file "$RUNNER_TEMP/pr-body.md" --number "$PR_NUMBER" --head-sha "$HEAD_SHA")`,
		`dispatch=(with-dispatch)`,
		`[ -n "$SGLANG_PR" ] && dispatch+=(--sglang-pr "$SGLANG_PR")`,
		`[ -n "$MEGATRON_PR" ] && dispatch+=(--megatron-pr "$MEGATRON_PR")`,
	}
	if slices.Contains(needs, "image") {
		script = append(script, `dispatch+=(--image-tag "${CONTAINER_IMAGE##*:}")`)
	}
	if p.GPU == policy.NoGPU {
		script = append(script, `module+=(--gpus none)`)
	} else {
		script = append(script, `module+=(--gpus all)`)
	}
	if d := p.VisibleDevices; d != "" {
		script = append(script, fmt.Sprintf(`[ -n "${%s:-}" ] && module+=(--visible-devices "$%s")`, d, d))
	}
	if p.DataMounts {
		script = append(script, `data=(with-data --models /data/miles_ci/models --datasets /data/miles_ci/datasets)`)
	} else {
		script = append(script, `data=()`)
	}
	// A fork PR gets no secrets (GitHub withholds them); the module is told so.
	var flags []string
	for _, s := range p.Secrets {
		flags = append(flags, secretFlags[s]+" env:"+s)
	}
	script = append(script,
		`if [ "$FORK" = true ]; then pr+=(--fork); secrets=(); else secrets=(with-secrets `+strings.Join(flags, " ")+`); fi`,
		// The runner's own default variables, never a secret: the container
		// gets them as a GitHub job container does. dagger reads a list flag
		// as CSV, so each entry is quoted (a ref or workflow name may hold a comma).
		`# The run's facts for the container (GITHUB_RUN_ID, ...), CSV-quoted for dagger's list flag.`,
		`run=(with-github-env)`,
		`for v in `+strings.Join(stagerun.GitHubVars, " ")+`; do`,
		`  if [ -n "${!v:-}" ]; then run+=(--env "\"$v=${!v//\"/\"\"}\""); fi`,
		`done`,
		`module+=("${pr[@]}" "${dispatch[@]}" "${data[@]}" "${secrets[@]}" "${run[@]}")`,
		`stage=(stage --name "$STAGE" --cadence "$CADENCE")`,
		`[ -n "$RAW_LABELS" ] && stage+=(--labels "${RAW_LABELS// /,}")`,
	)
	if p.MatchAllOnDispatch {
		script = append(script, `[ "$EVENT_NAME" = workflow_dispatch ] && stage+=(--match-all-labels)`)
	}
	script = append(script,
		`# The same --run-id makes the assert call reuse the test run instead of running it again.`,
		`dagger call "${module[@]}" "${stage[@]}" shard --number "$SHARD" test --run-id "$RUN_ID" results export --path "$RUNNER_TEMP/results"`,
		`go run "$MILES_CI" report --results "$RUNNER_TEMP/results"`,
		`dagger call "${module[@]}" "${stage[@]}" shard --number "$SHARD" test --run-id "$RUN_ID" assert`,
	)
	add(job, "steps", seq(
		checkout(0),
		setupGo(o),
		mapping(
			kvs("name", "Install Dagger"),
			kv("run", block(
				`curl -fsSL https://dl.dagger.io/dagger/install.sh | BIN_DIR="$HOME/.local/bin" sh`,
				`echo "$HOME/.local/bin" >> "$GITHUB_PATH"`,
			)),
		),
		mapping(
			kvs("name", "Test "+st.Name+" shard ${{ matrix.shard }}/${{ strategy.job-total }}"),
			kv("env", mapping(env...)),
			kv("run", block(script...)),
		),
	))
	return job
}

// cadences are the cadences a run can have, in a fixed order for the
// generated expressions.
var cadences = []policy.Cadence{policy.Regular, policy.Nightly, policy.Weekly, policy.Release}

// byCadence renders a value that depends on the run's cadence as one
// expression: the cadences whose value differs from the default are tested in
// order, e.g. cadence == 'weekly' && 1 || 3. values gives each cadence's value.
func byCadence(def string, values func(policy.Cadence) (string, bool)) (string, bool) {
	var terms []string
	for _, c := range cadences {
		if v, ok := values(c); ok && v != def {
			terms = append(terms, fmt.Sprintf("needs.policy.outputs.cadence == '%s' && %s", c, v))
		}
	}
	if len(terms) == 0 {
		return def, false
	}
	return strings.Join(append(terms, def), " || "), true
}

// maxParallel is the matrix max-parallel, by cadence where the roster says so.
func maxParallel(st policy.Stage) *yaml.Node {
	expr, varies := byCadence(fmt.Sprint(st.MaxParallel), func(c policy.Cadence) (string, bool) {
		if st.ByCadence != nil {
			if n, ok := st.ByCadence.MaxParallel[c]; ok {
				return fmt.Sprint(n), true
			}
		}
		if c == policy.Weekly {
			return fmt.Sprint(st.MaxParallelWeekly), true
		}
		return "", false
	})
	if !varies {
		return integer(st.MaxParallel)
	}
	return str("${{ " + expr + " }}")
}

// shardList is the JSON list of shard numbers 1..n, as every output
// numbers them (shard 2/4 is 2) and `shard --number` takes them, so
// GitHub's job title "stage-a-cpu (2)" is shard 2/4.
func shardList(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i + 1
	}
	return ids
}

// shardMatrix is the shard numbers, by cadence where the roster says so.
func shardMatrix(st policy.Stage) *yaml.Node {
	quotedList := func(n int) string {
		return "'" + strings.ReplaceAll(fmt.Sprint(shardList(n)), " ", ",") + "'"
	}
	expr, varies := byCadence(quotedList(st.Shards), func(c policy.Cadence) (string, bool) {
		if st.ByCadence != nil {
			if n, ok := st.ByCadence.Shards[c]; ok {
				return quotedList(n), true
			}
		}
		return "", false
	})
	if !varies {
		return flowInts(shardList(st.Shards)...)
	}
	return str("${{ fromJSON(" + expr + ") }}")
}
