package policy

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/internal/yamlnode"
	"gopkg.in/yaml.v3"
)

// workflowFacts is what the workflow reader saw besides the roster: the
// faults of single jobs and the schedule crons, for lint.
type workflowFacts struct {
	// files are the workflow files read, in order.
	files []string
	// drift are the faults found within single jobs.
	drift []Drift
	// crons are the on.schedule crons of the workflows.
	crons []located
}

// located is a value and where a file holds it.
type located struct {
	Value string
	File  string
	Line  int
}

// prWorkflows are the workflows whose stage jobs make the roster, with the
// image family their containers start from.
var prWorkflows = []struct{ rel, image string }{
	{PRTestWorkflow, ImageMiles},
	{PRTestROCmWorkflow, ImageROCm},
}

// allCadences are the cadences a workflow expression is evaluated under.
var allCadences = []Cadence{Regular, Nightly, Weekly, Release}

// readWorkflows reads the roster from the stage jobs of the PR workflows;
// when neither workflow exists the built-in roster stays, fitted to the
// checkout's CI_SUITES when it has its own.
func (t *Tables) readWorkflows(root string, docs workflowDocs) error {
	var rows []Stage
	for _, wf := range prWorkflows {
		d := docs.get(root, wf.rel)
		if d.err != nil {
			return d.err
		}
		if d.data == nil {
			continue
		}
		r := &workflowReader{root: root, rel: wf.rel, image: wf.image, tables: t, docs: docs}
		got, err := r.read(d)
		if err != nil {
			return err
		}
		rows = append(rows, got...)
		t.workflow.files = append(t.workflow.files, wf.rel)
		t.workflow.drift = append(t.workflow.drift, r.drift...)
		t.workflow.crons = append(t.workflow.crons, r.crons...)
	}
	if len(t.workflow.files) == 0 {
		if t.Origin(TableSuites).Builtin() {
			return nil
		}
		// The built-in roster, fitted to the checkout's own suites: a
		// built-in job whose suite the checkout does not list could only fail
		// with "Unknown suite", and the external rows are its nightly- suites.
		for _, s := range t.Roster {
			if !s.External && slices.Contains(t.Suites.Of(s.Backend), s.Name) {
				rows = append(rows, s)
			}
		}
		rows = append(rows, t.cudaStageRows(rows)...)
		t.Roster = append(rows, t.externalStages(rows)...)
		return nil
	}
	t.Roster = append(rows, t.externalStages(rows)...)
	for i := range t.Origins {
		if t.Origins[i].Table == TableRoster {
			t.Origins[i] = Origin{Table: TableRoster, File: strings.Join(t.workflow.files, ", ")}
		}
	}
	return nil
}

// cudaStageRows are built-in-style rows for the CUDA_STAGES stages that no
// row runs, when the checkout has no PR workflows: a GPU-generation checkout
// (rules §11.1) declares each CUDA stage's runners there, and its CUDA suites
// come from that table. Each row is a one-shard stage like the built-in CUDA
// stages, with the stage's runs_on.
func (t *Tables) cudaStageRows(rows []Stage) []Stage {
	var template *Stage
	for i := range rows {
		if rows[i].Backend == CUDA && !rows[i].External {
			template = &rows[i]
			break
		}
	}
	if template == nil {
		for _, s := range builtinRoster() {
			if s.Backend == CUDA {
				template = &s
				break
			}
		}
	}
	var out []Stage
	for _, cs := range t.CUDAStages {
		if len(cs.RunsOn) == 0 || !slices.Contains(t.Suites.CUDA, cs.Name) || slices.ContainsFunc(rows, func(r Stage) bool { return r.Name == cs.Name }) {
			continue
		}
		st := template.clone()
		st.Name, st.RunsOn, st.Job, st.ByCadence = cs.Name, slices.Clone(cs.RunsOn), "", nil
		st.Shards, st.MaxParallel, st.MaxParallelWeekly = 1, 1, 1
		st.Source = t.elementOrigin(TableCUDAStages, cs.Name)
		out = append(out, st)
	}
	return out
}

// externalStages are the CI_SUITES suites named nightly-... that no row
// runs: only the external nightly runs them, and rules §1 lists them as
// roster rows of their own.
func (t *Tables) externalStages(rows []Stage) []Stage {
	var external []Stage
	for _, b := range Backends() {
		for _, s := range t.Suites.Of(b) {
			if !strings.HasPrefix(s, "nightly-") || slices.ContainsFunc(rows, func(r Stage) bool { return r.Name == s }) {
				continue
			}
			external = append(external, Stage{Name: s, Backend: b, RunsOn: []string{}, Needs: []string{}, External: true,
				Source: t.elementOrigin(TableSuites, s)})
		}
	}
	slices.SortFunc(external, func(a, b Stage) int { return strings.Compare(a.Name, b.Name) })
	return external
}

// elementOrigin is "FILE:LINE" of one element of a read table, else "built-in".
func (t *Tables) elementOrigin(table, elem string) string {
	o := t.Origin(table)
	if o.Builtin() {
		return "built-in"
	}
	if line := t.lines[table][elem]; line > 0 {
		return fmt.Sprintf("%s:%d", o.File, line)
	}
	return o.String()
}

// workflowReader reads one workflow file.
type workflowReader struct {
	root, rel, image string
	tables           *Tables
	drift            []Drift
	crons            []located
	// called caches the runner labels of each called workflow.
	called map[string][]string
	// docs are the workflow files decoded so far (nil: decode each anew).
	docs workflowDocs
}

// workflowDocs holds the workflow files one LoadTables has read, each decoded
// once: a run workflow is read for the runners of the stage jobs that call it
// (from each PR workflow) and again for its steps, and decoding YAML is most
// of what reading the tables costs.
type workflowDocs map[string]*workflowDoc

// workflowDoc is one workflow file, read and decoded.
type workflowDoc struct {
	data []byte // nil when there is no such file
	err  error  // reading it failed (readTableFile)
	doc  yaml.Node
	bad  error // it is not valid YAML
}

// get reads and decodes the repo-relative file rel below root, once per docs
// (every time when docs is nil). The nodes are shared: readers never change them.
func (ds workflowDocs) get(root, rel string) *workflowDoc {
	if d, ok := ds[rel]; ok {
		return d
	}
	d := decodeWorkflow(readTableFile(root, rel))
	if ds != nil {
		ds[rel] = d
	}
	return d
}

// workflowFiles are the workflow files of the checkout the tables were read
// from, each read and decoded once; mu guards docs once LoadTables returned.
type workflowFiles struct {
	mu   sync.Mutex
	root string
	docs workflowDocs
}

// WorkflowFile is one of the checkout's workflow files, as read once.
type WorkflowFile struct {
	// Data is the file, nil when there is no such file.
	Data []byte
	// Doc is its YAML document; Invalid says why it is not valid YAML.
	Doc     *yaml.Node
	Invalid error
}

// Workflow is the checkout's workflow file rel (repo-relative): the one
// LoadTables read and decoded, or read and decoded now, once. Every reader of
// the checkout's workflows (the roster, the graph) reads them here, so each
// file is read and decoded once; the nodes are shared and never changed.
func (t *Tables) Workflow(rel string) (WorkflowFile, error) {
	if t.files == nil {
		return WorkflowFile{}, fmt.Errorf("the built-in tables hold no workflow file (%s); read the tables of a checkout", rel)
	}
	t.files.mu.Lock()
	d := t.files.docs.get(t.files.root, rel)
	t.files.mu.Unlock()
	if d.err != nil {
		return WorkflowFile{}, d.err
	}
	return WorkflowFile{Data: d.data, Doc: &d.doc, Invalid: d.bad}, nil
}

// decodeWorkflow decodes a workflow file's data as readTableFile returns it.
func decodeWorkflow(data []byte, err error) *workflowDoc {
	d := &workflowDoc{data: data, err: err}
	if err == nil && data != nil {
		d.bad = yaml.Unmarshal(data, &d.doc)
	}
	return d
}

// single is the root node of a file that holds one valid YAML document, or nil.
func (d *workflowDoc) single() *yaml.Node {
	if d.err != nil || d.data == nil || d.bad != nil || d.doc.Kind != yaml.DocumentNode || len(d.doc.Content) != 1 {
		return nil
	}
	return deref(d.doc.Content[0])
}

// job is one job of a workflow, as the roster needs it.
type job struct {
	id    string
	line  int
	node  *yaml.Node
	ifs   string
	needs []string
}

func (r *workflowReader) fail(line int, name, format string, args ...any) error {
	return &TableError{File: r.rel, Line: line, Name: name, Msg: fmt.Sprintf(format, args...)}
}

// note records a fault of one job, once.
func (r *workflowReader) note(line int, kind, format string, args ...any) {
	d := Drift{Kind: kind, File: r.rel, Line: line, Message: fmt.Sprintf(format, args...)}
	if !slices.Contains(r.drift, d) {
		r.drift = append(r.drift, d)
	}
}

func (r *workflowReader) read(d *workflowDoc) ([]Stage, error) {
	if d.bad != nil {
		return nil, &TableError{File: r.rel, Msg: "is not valid YAML: " + strings.TrimPrefix(d.bad.Error(), "yaml: ") + "; fix it so that GitHub can load the workflow"}
	}
	if d.doc.Kind == 0 {
		return nil, nil // an empty file has no jobs
	}
	top := deref(&d.doc)
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = deref(top.Content[0])
	}
	if top.Kind != yaml.MappingNode {
		return nil, r.fail(top.Line, "", "is not a workflow: its top level must be a mapping with jobs:")
	}
	r.readCrons(get(top, "on"))
	jobsNode := get(top, "jobs")
	if jobsNode == nil {
		return nil, nil
	}
	if jobsNode.Kind != yaml.MappingNode {
		return nil, r.fail(jobsNode.Line, "jobs", "must be a mapping of job id to job")
	}
	var jobs []job
	for i := 0; i+1 < len(jobsNode.Content); i += 2 {
		k, v := jobsNode.Content[i], deref(jobsNode.Content[i+1])
		if v.Kind != yaml.MappingNode {
			return nil, r.fail(k.Line, k.Value, "must be a mapping (a job)")
		}
		ifs, _ := scalar(get(v, "if"))
		jobs = append(jobs, job{id: k.Value, line: k.Line, node: v, ifs: ifs, needs: strList(get(v, "needs"))})
	}
	var rows []Stage
	for _, j := range jobs {
		got, err := r.stageRows(j, jobs)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	return rows, nil
}

// readCrons keeps the on.schedule crons.
func (r *workflowReader) readCrons(on *yaml.Node) {
	sched := get(on, "schedule")
	if sched == nil || sched.Kind != yaml.SequenceNode {
		return
	}
	for _, item := range sched.Content {
		if c := get(deref(item), "cron"); c != nil {
			if s, ok := scalar(c); ok {
				r.crons = append(r.crons, located{Value: s, File: r.rel, Line: c.Line})
			}
		}
	}
}

// runSuiteCommand returns the run_suite.py command a job runs and its line:
// the execute_command input of a called run workflow, or a step's run:.
func runSuiteCommand(j job) (string, int) {
	if c := get(get(j.node, "with"), "execute_command"); c != nil {
		if s, ok := scalar(c); ok && strings.Contains(s, "run_suite.py") {
			return s, c.Line
		}
	}
	if steps := get(j.node, "steps"); steps != nil && steps.Kind == yaml.SequenceNode {
		for _, st := range steps.Content {
			if c := get(deref(st), "run"); c != nil {
				if s, ok := scalar(c); ok && strings.Contains(s, "run_suite.py") {
					return s, c.Line
				}
			}
		}
	}
	return "", 0
}

// callsRunWorkflow reports a job that calls one of Miles' reusable run
// workflows (./.github/workflows/_run-*.yml).
func callsRunWorkflow(j job) (string, bool) {
	uses, _ := scalar(get(j.node, "uses"))
	if !strings.HasPrefix(uses, "./") {
		return "", false
	}
	return uses, strings.HasPrefix(path.Base(uses), "_run-")
}

// stageRows returns the roster rows of one job: one for a job that runs
// run_suite.py, one per gated stage for a run-workflow job that shards its
// suites itself, none for any other job.
func (r *workflowReader) stageRows(j job, jobs []job) ([]Stage, error) {
	cmd, cmdLine := runSuiteCommand(j)
	uses, runJob := callsRunWorkflow(j)
	if cmd == "" {
		if !runJob {
			return nil, nil
		}
		gated := gatedStages(j, jobs)
		if len(gated) == 0 {
			r.note(j.line, DriftJob, "job %s calls %s but runs no run_suite.py command and names no stage in a skipped_stages gate; miles-ci cannot tell which suite it runs", j.id, uses)
			return nil, nil
		}
		var rows []Stage
		for _, name := range gated {
			st := r.baseStage(j, jobs, name)
			st.Backend = r.backendOf(name)
			// The called workflow plans and splits the suite itself (Miles'
			// B200 pool): to run_suite.py's partitioning it is one whole suite.
			st.Shards, st.MaxParallel, st.MaxParallelWeekly = 1, 1, 1
			rows = append(rows, st)
		}
		return rows, nil
	}
	args, err := ParseRunSuiteCommand(cmd)
	if err != nil {
		return nil, r.fail(cmdLine, j.id, "has a run_suite.py command miles-ci cannot read: %v", err)
	}
	// A job may run a suite other than its own name: Miles' early ROCm job
	// stage-c-8-gpu-mi300x ran --hw cuda --suite stage-c-8-gpu-h100. The gates
	// name stages, not jobs, so that is no drift by itself.
	name := args.Value("--suite")
	if name == "" || strings.HasPrefix(name, "${{") {
		r.note(cmdLine, DriftJob, "job %s runs run_suite.py without a literal --suite; give the suite, e.g. --suite %s", j.id, j.id)
		name = j.id
	}
	st := r.baseStage(j, jobs, name)
	if hw, err := ParseBackend(args.Value("--hw")); err == nil {
		st.Backend = hw
	} else {
		r.note(cmdLine, DriftJob, "job %s runs run_suite.py with --hw %q; use %s", j.id, args.Value("--hw"), backendList())
		st.Backend = r.backendOf(name)
	}
	if err := r.shards(j, &st, args, cmdLine); err != nil {
		return nil, err
	}
	return []Stage{st}, nil
}

// baseStage fills what every stage row of a job shares.
func (r *workflowReader) baseStage(j job, jobs []job, name string) Stage {
	st := Stage{
		Name:          name,
		Job:           j.id,
		Source:        fmt.Sprintf("%s:%d", r.rel, j.line),
		RunsOn:        r.runsOn(j),
		Needs:         j.needs,
		FastFailGated: fastFailGate.MatchString(j.ifs),
		SkipGated:     slices.Contains(gatedStages(j, jobs), name),
	}
	if st.Needs == nil {
		st.Needs = []string{}
	}
	if get(get(j.node, "with"), "container_image") != nil {
		st.Image = r.image
	}
	if c := get(j.node, "container"); c != nil {
		st.Image = r.image
		img, _ := scalar(c)
		if c.Kind == yaml.MappingNode {
			img, _ = scalar(get(c, "image"))
		}
		if img != "" && !strings.Contains(img, "${{") {
			st.Image, _, _ = strings.Cut(strings.SplitN(img, "@", 2)[0], ":")
		}
	}
	return st
}

// backendOf finds the backend whose CI_SUITES list holds a suite.
func (r *workflowReader) backendOf(suite string) Backend {
	for _, b := range Backends() {
		if slices.Contains(r.tables.Suites.Of(b), suite) {
			return b
		}
	}
	return ""
}

var (
	// fastFailGate is the cross-stage fast-fail condition of rules §1.
	fastFailGate = lazyre.New(`needs\.stage-a-cpu\.result\s*==\s*'success'`)
	// skipGate is `contains(fromJSON(needs.X.outputs.skipped_stages ...), 'STAGE')`.
	skipGate = lazyre.New(`contains\(\s*fromJSON\(\s*needs\.[A-Za-z0-9_-]+\.outputs\.skipped_stages[^)]*\)\s*,\s*'([^']+)'\s*\)`)
	// matrixRef is an --auto-partition-id of ${{ matrix.KEY }}.
	matrixRef = lazyre.New(`^\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}$`)
)

// gatedStages are the stages a skipped_stages gate names in the job's if: or
// in that of a job it needs (a job whose need was skipped is skipped too).
func gatedStages(j job, jobs []job) []string {
	var out []string
	seen := map[string]bool{}
	queue := []job{j}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if seen[cur.id] {
			continue
		}
		seen[cur.id] = true
		for _, m := range skipGate.FindAllStringSubmatch(cur.ifs, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
		for _, n := range cur.needs {
			if k := slices.IndexFunc(jobs, func(x job) bool { return x.id == n }); k >= 0 {
				queue = append(queue, jobs[k])
			}
		}
	}
	return out
}

// runsOn reads the runner labels: the job's own runs-on, the runs_on input of
// a called run workflow (a JSON array), or the runs-on of the called
// workflow's first job.
func (r *workflowReader) runsOn(j job) []string {
	if ro := get(j.node, "runs-on"); ro != nil {
		if l := strList(ro); len(l) > 0 && !strings.Contains(strings.Join(l, " "), "${{") {
			return l
		}
	}
	if in, ok := scalar(get(get(j.node, "with"), "runs_on")); ok && !strings.Contains(in, "${{") {
		var l []string
		if json.Unmarshal([]byte(in), &l) == nil {
			return l
		}
		return []string{in}
	}
	if uses, ok := callsRunWorkflow(j); ok || strings.HasPrefix(uses, "./") {
		return r.calledRunsOn(uses)
	}
	return []string{}
}

// calledRunsOn is the literal runs-on of the job of a local called workflow
// that runs its execute_command input, else of its only job. A called
// workflow with several jobs and none of them running the command (Miles'
// _run-ci-b200.yml: an ubuntu-latest planner, then a matrix of batches whose
// runners the planner picks) has no static runners: the planner's are not
// the stage's.
func (r *workflowReader) calledRunsOn(uses string) []string {
	if r.called == nil {
		r.called = map[string][]string{}
	}
	if l, ok := r.called[uses]; ok {
		return l
	}
	out := []string{}
	if jobs := r.calledJobs(uses); jobs != nil {
		var runner *yaml.Node
		for i := 1; i < len(jobs.Content); i += 2 {
			if runsCommand(deref(jobs.Content[i])) {
				runner = deref(jobs.Content[i])
				break
			}
		}
		if runner == nil && len(jobs.Content) == 2 {
			runner = deref(jobs.Content[1])
		}
		if l := strList(get(runner, "runs-on")); len(l) > 0 && !strings.Contains(strings.Join(l, " "), "${{") {
			out = l
		}
	}
	r.called[uses] = out
	return out
}

// calledJobs is the jobs mapping of a local called workflow, or nil.
func (r *workflowReader) calledJobs(uses string) *yaml.Node {
	rel := path.Clean(strings.TrimPrefix(uses, "./"))
	if strings.HasPrefix(rel, "..") {
		return nil
	}
	top := r.docs.get(r.root, rel).single()
	if top == nil {
		return nil
	}
	jobs := get(top, "jobs")
	if jobs == nil || jobs.Kind != yaml.MappingNode || len(jobs.Content) < 2 {
		return nil
	}
	return jobs
}

// runsCommand reports a called workflow's job with a step that runs the
// caller's execute_command input.
func runsCommand(j *yaml.Node) bool {
	steps := get(j, "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode {
		return false
	}
	for _, st := range steps.Content {
		if s, ok := scalar(get(deref(st), "run")); ok && strings.Contains(s, "inputs.execute_command") {
			return true
		}
	}
	return false
}

// RunSuiteCommand is a run_suite.py command line read as its argparse reads
// it: the flags after run_suite.py, in order. Every reader of a stage job's
// command (the roster, from the workflow text; the graph, evaluated) reads it
// here.
type RunSuiteCommand struct {
	// Found says the line runs run_suite.py.
	Found bool
	Flags []RunSuiteFlag
}

// RunSuiteFlag is one flag and the words it took: one for a flag that takes
// a value (none when the next word is a flag or there is none), every word up
// to the next flag for --labels, none for any other flag.
type RunSuiteFlag struct {
	Name   string
	Values []string
}

// valueFlags are the run_suite.py flags that take one value.
var valueFlags = map[string]bool{"--hw": true, "--suite": true, "--auto-partition-id": true, "--auto-partition-size": true,
	"--cadence": true, "--timeout-per-file": true, "--max-attempts": true, "--retry-wait-seconds": true, "--retry-timeout-increase": true,
	"--test-file": true}

// ParseRunSuiteCommand reads the flags after run_suite.py in a command line
// whose ${{ }} expressions count as one word each; --flag=value gives flag its
// value.
func ParseRunSuiteCommand(cmd string) (RunSuiteCommand, error) {
	words, err := commandWords(cmd)
	if err != nil {
		return RunSuiteCommand{}, err
	}
	start := slices.IndexFunc(words, func(w string) bool { return strings.HasSuffix(w, "run_suite.py") })
	c := RunSuiteCommand{Found: start >= 0}
	for i := start + 1; start >= 0 && i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "--") {
			continue
		}
		name, inline, hasInline := strings.Cut(w, "=")
		f := RunSuiteFlag{Name: name, Values: []string{}}
		switch {
		case hasInline:
			f.Values = append(f.Values, inline)
		case valueFlags[name] && i+1 < len(words) && !strings.HasPrefix(words[i+1], "--"):
			i++
			f.Values = append(f.Values, words[i])
		case name == "--labels":
			for i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") {
				i++
				f.Values = append(f.Values, words[i])
			}
		}
		c.Flags = append(c.Flags, f)
	}
	return c, nil
}

// Given says the command gives flag.
func (c RunSuiteCommand) Given(flag string) bool {
	return slices.ContainsFunc(c.Flags, func(f RunSuiteFlag) bool { return f.Name == flag })
}

// Value is flag's value: the last one given ("" when none was).
func (c RunSuiteCommand) Value(flag string) string {
	v := ""
	for _, f := range c.Flags {
		if f.Name == flag && len(f.Values) > 0 {
			v = f.Values[0]
		}
	}
	return v
}

// commandWords splits a shell command on blanks, keeping each ${{ }} whole.
func commandWords(cmd string) ([]string, error) {
	var words []string
	var cur strings.Builder
	for i := 0; i < len(cmd); {
		if strings.HasPrefix(cmd[i:], "${{") {
			end := strings.Index(cmd[i:], "}}")
			if end < 0 {
				return nil, fmt.Errorf("an expression ${{ is never closed")
			}
			cur.WriteString(cmd[i : i+end+2])
			i += end + 2
			continue
		}
		if strings.ContainsRune(" \t\n\r\\", rune(cmd[i])) {
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
			i++
			continue
		}
		cur.WriteByte(cmd[i])
		i++
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words, nil
}

// shards reads the shard count and max-parallel of each cadence from the
// job's matrix, its --auto-partition-* flags and strategy.max-parallel,
// noting where they disagree. A matrix or shard count over MaxShards is an
// error: GitHub would refuse the workflow, and the roster must bound the
// shards plan --all plans.
func (r *workflowReader) shards(j job, st *Stage, a RunSuiteCommand, cmdLine int) error {
	strategy := get(j.node, "strategy")
	matrix := get(strategy, "matrix")
	idWord, sizeWord := a.Value("--auto-partition-id"), a.Value("--auto-partition-size")
	partitioned := a.Given("--auto-partition-id") || a.Given("--auto-partition-size")
	if a.Given("--auto-partition-id") != a.Given("--auto-partition-size") {
		r.note(cmdLine, DriftJob, "job %s passes only one of --auto-partition-id and --auto-partition-size; run_suite.py needs both", j.id)
	}
	key := ""
	if m := matrixRef.FindStringSubmatch(idWord); m != nil {
		key = m[1]
	} else if partitioned && idWord != "" {
		r.note(cmdLine, DriftJob, "job %s runs --auto-partition-id %s; pass ${{ matrix.partition_id }} so that each matrix job runs its own shard", j.id, idWord)
	}
	if partitioned && matrix == nil {
		r.note(cmdLine, DriftJob, "job %s partitions run_suite.py but has no strategy.matrix: only one shard ever runs", j.id)
	}
	if key != "" && matrix != nil && get(matrix, key) == nil {
		r.note(cmdLine, DriftJob, "job %s runs --auto-partition-id ${{ matrix.%s }} but its matrix has no %s", j.id, key, key)
	}
	shards := map[Cadence]int{}
	parallel := map[Cadence]int{}
	// mismatch lists the cadences under which size and matrix disagree, per
	// (size, matrix jobs), so that one fault is one note.
	mismatch := map[[2]int][]string{}
	var order [][2]int
	for _, c := range allCadences {
		jobs, err := matrixJobs(matrix, key, c)
		if err != nil {
			r.note(j.line, DriftJob, "job %s: cannot read the matrix for cadence %s: %v", j.id, c, err)
			jobs = 1
		}
		// GitHub counts every axis, not only the partition key's: a matrix
		// whose other axes multiply past the limit is refused, never read
		// as its key's length.
		total := jobs
		if key != "" {
			if t, err := matrixJobs(matrix, "", c); err == nil {
				total = t
			}
		}
		if jobs > MaxShards || total > MaxShards {
			return r.fail(j.line, j.id, "makes more than %d matrix jobs under cadence %s; GitHub Actions runs at most %d jobs from one matrix, so make the matrix smaller", MaxShards, c, MaxShards)
		}
		n := 1
		if partitioned {
			if n, err = exprInt(sizeWord, c, jobs); err != nil {
				r.note(cmdLine, DriftJob, "job %s: cannot read --auto-partition-size %s: %v", j.id, sizeWord, err)
				n = jobs
			} else if n > MaxShards {
				return r.fail(cmdLine, j.id, "runs --auto-partition-size %d under cadence %s; a stage has 1 to %d shards (GitHub Actions runs at most %d jobs from one matrix)", n, c, MaxShards, MaxShards)
			} else if n != jobs && matrix != nil {
				k := [2]int{n, jobs}
				if _, seen := mismatch[k]; !seen {
					order = append(order, k)
				}
				mismatch[k] = append(mismatch[k], string(c))
			}
		} else if jobs > 1 {
			r.note(cmdLine, DriftJob, "job %s has %d matrix jobs but runs run_suite.py without --auto-partition-id/--auto-partition-size: every job runs the whole suite", j.id, jobs)
		}
		shards[c] = n
		parallel[c] = jobs
		if mp := get(strategy, "max-parallel"); mp != nil {
			s, _ := scalar(mp)
			if v, err := exprInt(s, c, jobs); err != nil {
				r.note(mp.Line, DriftJob, "job %s: cannot read max-parallel %s: %v", j.id, s, err)
			} else {
				parallel[c] = v
			}
		}
	}
	for _, k := range order {
		when := "for cadence " + strings.Join(mismatch[k], ", ")
		if len(mismatch[k]) == len(allCadences) {
			when = "under every cadence"
		}
		r.note(cmdLine, DriftJob, "job %s runs --auto-partition-size %d but its matrix has %d job(s) %s: shards and matrix jobs must match", j.id, k[0], k[1], when)
	}
	st.Shards, st.MaxParallel, st.MaxParallelWeekly = shards[Regular], parallel[Regular], parallel[Weekly]
	uniform := true
	for _, c := range allCadences {
		uniform = uniform && shards[c] == st.Shards && (c == Weekly || parallel[c] == st.MaxParallel)
	}
	if !uniform {
		st.ByCadence = &CadenceCounts{Shards: shards, MaxParallel: parallel}
	}
	return nil
}

// matrixJobs is the number of jobs a matrix makes under a cadence: the
// length of the partition key's list, or the product of every key's.
func matrixJobs(matrix *yaml.Node, key string, c Cadence) (int, error) {
	if matrix == nil {
		return 1, nil
	}
	if matrix.Kind == yaml.ScalarNode {
		return listLen(matrix, c)
	}
	if key != "" && get(matrix, key) != nil {
		return listLen(get(matrix, key), c)
	}
	n := 1
	for i := 0; i+1 < len(matrix.Content); i += 2 {
		if k := matrix.Content[i].Value; k == "include" || k == "exclude" {
			continue
		}
		m, err := listLen(deref(matrix.Content[i+1]), c)
		if err != nil {
			return 0, err
		}
		// Saturate: only "more than MaxShards" matters, and a product of
		// long lists must not overflow.
		n = min(n*min(m, MaxShards+1), MaxShards+1)
	}
	return n, nil
}

// listLen is the length of a matrix list: a YAML sequence, or an expression
// that gives a JSON array (evaluated under a cadence).
func listLen(n *yaml.Node, c Cadence) (int, error) {
	n = deref(n)
	if n.Kind == yaml.SequenceNode {
		return len(n.Content), nil
	}
	s, ok := scalar(n)
	if !ok {
		return 0, fmt.Errorf("a matrix entry must be a list or an expression")
	}
	v, err := evalWord(s, c, 0)
	if err != nil {
		return 0, err
	}
	arr, ok := v.([]any)
	if !ok {
		return 0, fmt.Errorf("%s is not a list", s)
	}
	return len(arr), nil
}

// exprInt reads an integer that is either literal or a ${{ }} expression of
// the cadence and strategy.job-total.
func exprInt(word string, c Cadence, jobTotal int) (int, error) {
	v, err := evalWord(word, c, jobTotal)
	if err != nil {
		return 0, err
	}
	f, ok := v.(float64)
	if !ok {
		s, isStr := v.(string)
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if !isStr || err != nil {
			return 0, fmt.Errorf("%s is not a number", word)
		}
		f = float64(n)
	}
	if f != float64(int(f)) || f < 0 || f > 1<<16 {
		return 0, fmt.Errorf("%s is not a small whole number", word)
	}
	return int(f), nil
}

// evalWord evaluates a ${{ expr }} word, or reads a literal number.
func evalWord(word string, c Cadence, jobTotal int) (any, error) {
	inner, ok := strings.CutPrefix(strings.TrimSpace(word), "${{")
	if !ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(word), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a number nor an expression", word)
		}
		return f, nil
	}
	inner, ok = strings.CutSuffix(inner, "}}")
	if !ok || strings.Contains(inner, "${{") {
		return nil, fmt.Errorf("%q is not one expression", word)
	}
	return evalExpr(inner, func(p string) (any, bool) {
		switch {
		case p == "inputs.cadence" || strings.HasSuffix(p, ".outputs.cadence"):
			return string(c), true
		case p == "strategy.job-total" && jobTotal > 0:
			return float64(jobTotal), true
		}
		return nil, false
	})
}

// The YAML accessors (internal/yamlnode), shared with cirun's reader.
var (
	deref   = yamlnode.Deref
	get     = yamlnode.Get
	scalar  = yamlnode.Scalar
	strList = yamlnode.StrList
)
