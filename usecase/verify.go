package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/checkoutpy"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/policy/pysource"
)

// VerifyRequest is what `miles-ci verify` (and the module's verify) compares:
// miles-ci's answers against the checkout's own tests/ci code.
type VerifyRequest struct {
	// Repo is the Miles checkout.
	Repo string
	// Python is the interpreter for the checkout's code ("" = python3).
	Python string
	// Interpreter, when set, runs the checkout's code instead of Python (the
	// Dagger module's Python 3.11 container).
	Interpreter Interpreter
	// Diffs are changed-files diffs (git diff --name-status -z -M) to resolve
	// the pull-request policy with, besides the generated ones, e.g. the
	// checkout's recent commits (GitDiffs).
	Diffs []NamedDiff
	// MaxCases bounds the cases of each command (0 = DefaultMaxCases): the
	// generated set is thinned evenly to fit.
	MaxCases int
	// Progress, when set, is told the command being checked and how many
	// of its cases the checkout has answered, at the start and after each
	// batch: the checkout is then asked in up to progressSteps batches (a
	// process each), so a long verify shows that it moves.
	Progress func(command string, done, total int)
}

// progressSteps is how many batches a command's cases are asked in when
// the caller wants progress.
const progressSteps = 10

// minBatch is the fewest cases a batch asks.
const minBatch = 100

// NamedDiff is one changed-files diff and what to call it in the report.
type NamedDiff struct {
	Name string
	Diff []byte // nil: no diff file at all (the workflow's failed git diff)
}

// DefaultMaxCases is the default bound of cases per command.
const DefaultMaxCases = 3000

// VerifyReport is the agreement of each command.
type VerifyReport struct {
	// Repo is the checkout's folder, as the request named it.
	Repo string `json:"repo"`
	// Commands are plan, policy and file-plan, in that order.
	Commands []CommandReport `json:"commands"`
}

// CommandReport is one command's agreement.
type CommandReport struct {
	// Command is plan, policy or file-plan.
	Command string `json:"command"`
	// Cases is how many cases were compared; Agree how many gave the same answer.
	Cases int `json:"cases"`
	Agree int `json:"agree"`
	// OnPurpose counts the agreeing cases where miles-ci differs from the
	// checkout on purpose (README: where miles-ci differs), with why.
	OnPurpose int    `json:"on_purpose,omitempty"`
	Purpose   string `json:"purpose,omitempty"`
	// NotCompared says why the command was not compared at all ("" = it was).
	NotCompared string `json:"not_compared,omitempty"`
	// MilesCIError is miles-ci failing on the checkout as a whole (its
	// tables or registry) for the cases that read it; Declined is the same
	// when miles-ci recognises a form it does not cover (rules §11.7), the
	// message it gives. Those cases are not compared.
	MilesCIError string `json:"miles_ci_error,omitempty"`
	Declined     string `json:"declined,omitempty"`
	// NotAnswered counts the cases miles-ci declined.
	NotAnswered int `json:"not_answered,omitempty"`
	// MilesCIFailed counts the cases where miles-ci failed with
	// MilesCIError; they are compared all the same: the checkout refusing
	// the case too agrees.
	MilesCIFailed int `json:"miles_ci_failed,omitempty"`
	// Differences are the cases that disagree.
	Differences []Difference `json:"differences"`
}

// Difference is one case where miles-ci and the checkout disagree.
type Difference struct {
	// Case is the question, as a command line.
	Case string `json:"case"`
	// MilesCI and Checkout are the two answers (or errors).
	MilesCI  string `json:"miles_ci"`
	Checkout string `json:"checkout"`
	// Failed says which side refused the case: miles-ci, checkout, both
	// (refusing differently), or "" (both answered, differently).
	Failed string `json:"failed,omitempty"`
}

// failedSide names the side that refused a case, for a Difference.
func failedSide(goErr error, a checkoutpy.Answer) string {
	switch {
	case goErr != nil && a.Exit != 0:
		return "both"
	case goErr != nil:
		return "miles-ci"
	case a.Exit != 0:
		return "checkout"
	}
	return ""
}

// OK reports whether every compared case agrees and miles-ci could answer.
func (r VerifyReport) OK() bool {
	for _, c := range r.Commands {
		if c.Declined != "" || len(c.Differences) > 0 || c.Agree != c.Cases {
			return false
		}
	}
	return true
}

// Text is the report as verify prints it.
func (r VerifyReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verify %s: miles-ci against the checkout's own tests/ci code\n", r.Repo)
	total := 0
	for _, c := range r.Commands {
		switch {
		case c.NotCompared != "":
			fmt.Fprintf(&b, "%-10s not compared: %s\n", c.Command, c.NotCompared)
			continue
		case c.Declined != "":
			fmt.Fprintf(&b, "%-10s declined (%d/%d cases): %s\n", c.Command, c.NotAnswered, c.Cases, c.Declined)
		case c.MilesCIError != "":
			fmt.Fprintf(&b, "%-10s miles-ci fails on this checkout (%d/%d cases, compared: the same refusal agrees): %s\n", c.Command, c.MilesCIFailed, c.Cases, c.MilesCIError)
		}
		if c.NotAnswered == c.Cases && c.Cases > 0 {
			total += c.Cases
			continue
		}
		// The agreement line: of every case, or of those miles-ci answered.
		if c.NotAnswered > 0 {
			fmt.Fprintf(&b, "%-10s %d/%d of the other cases agree", "", c.Agree, c.Cases-c.NotAnswered)
		} else {
			fmt.Fprintf(&b, "%-10s %d/%d agree", c.Command, c.Agree, c.Cases)
		}
		if c.OnPurpose > 0 {
			fmt.Fprintf(&b, " (%d differ on purpose: %s)", c.OnPurpose, c.Purpose)
		}
		b.WriteString("\n")
		for i, d := range c.Differences {
			if i == maxShownDifferences {
				fmt.Fprintf(&b, "  ... and %d more (--json lists every one)\n", len(c.Differences)-i)
				break
			}
			if d.Failed != "" {
				fmt.Fprintf(&b, "  - %s (%s failed)\n", d.Case, failedWording(d.Failed))
			} else {
				fmt.Fprintf(&b, "  - %s\n", d.Case)
			}
			fmt.Fprintf(&b, "%s", indentDiff(d.MilesCI, d.Checkout))
		}
		total += c.Cases - c.Agree
	}
	declined := false
	for _, c := range r.Commands {
		declined = declined || c.Declined != ""
	}
	switch {
	case total == 0 && r.OK():
		b.WriteString("every answer agrees\n")
	case declined:
		fmt.Fprintf(&b, "%d case(s) not answered or differ: miles-ci does not cover this checkout; use --planner checkout, or update miles-ci\n", total)
	default:
		fmt.Fprintf(&b, "%d case(s) differ: miles-ci does not give this checkout's answers\n", total)
	}
	return b.String()
}

// failedWording is how Text says which side failed.
func failedWording(side string) string {
	if side == "both" {
		return "both sides"
	}
	return side
}

// maxShownDifferences bounds the differences Text lists per command.
const maxShownDifferences = 20

// indentDiff shows two answers line by line: the lines only miles-ci gives
// (-) and only the checkout gives (+), with the lines around them.
func indentDiff(milesCI, checkout string) string {
	a, c := strings.Split(strings.TrimRight(milesCI, "\n"), "\n"), strings.Split(strings.TrimRight(checkout, "\n"), "\n")
	var b strings.Builder
	b.WriteString("      --- miles-ci\n      +++ checkout\n")
	for _, l := range trimContext(lineDiff(a, c), 2) {
		b.WriteString("      " + l + "\n")
	}
	return b.String()
}

// lineDiff is a longest-common-subsequence line diff ("  ", "- ", "+ ").
func lineDiff(a, c []string) []string {
	if len(a)*len(c) > 1<<20 {
		return append(prefixed("- ", a), prefixed("+ ", c)...)
	}
	n, m := len(a), len(c)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == c[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == c[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+c[j])
			j++
		default:
			out = append(out, "- "+a[i])
			i++
		}
	}
	return out
}

// trimContext keeps the changed lines of a line diff and n unchanged lines
// around each; each run of lines left out becomes one "  ..." line.
func trimContext(lines []string, n int) []string {
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if !strings.HasPrefix(l, "  ") {
			for j := max(0, i-n); j <= min(len(lines)-1, i+n); j++ {
				keep[j] = true
			}
		}
	}
	var out []string
	for i, l := range lines {
		switch {
		case keep[i]:
			out = append(out, l)
		case i == 0 || keep[i-1]:
			out = append(out, "  ...")
		}
	}
	return out
}

func prefixed(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}

// verifyCase is one generated case: the question to the checkout and
// miles-ci's answer to it.
type verifyCase struct {
	name  string
	ask   checkoutpy.Case
	goAns func() (string, error)
	// judge compares; nil is exact equality of the answer texts, and both
	// refusing agrees.
	judge func(goText string, goErr error, a checkoutpy.Answer) (agree bool, onPurpose bool, checkout string)
}

// Verify compares miles-ci with the checkout's own tests/ci code on a set of
// cases generated from the checkout's tables: every suite × cadence × label
// set (with run-on-* and scope labels, and every shard of sharded stages)
// for plan; pull_request (label sets × diffs), schedule, dispatch and
// called-workflow triggers for policy; every test file for file-plan.
func Verify(ctx context.Context, req VerifyRequest) (VerifyReport, error) {
	c, err := checkoutpy.Open(req.Repo, req.Python, req.Interpreter)
	if err != nil {
		return VerifyReport{}, err
	}
	rep := VerifyReport{Repo: req.Repo}
	if rep.Repo == "" {
		rep.Repo = "."
	}
	max := req.MaxCases
	if max <= 0 {
		max = DefaultMaxCases
	}
	tables, tErr := policy.LoadTables(c.Root)
	var reg *policy.Registry
	rErr := tErr
	if tErr == nil {
		reg, rErr = tables.LoadRegistry(c.Root)
	}
	if tables == nil {
		tables = policy.BuiltinTables()
	}
	tmp, err := os.MkdirTemp("", "miles-ci-verify-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(tmp)
	type command struct {
		name, entry string
		cases       []verifyCase
	}
	cmds := []command{
		{"plan", checkoutpy.RunSuiteScript, thin(planCases(tables, reg, rErr), max)},
		{"policy", "tests/ci/ci_policy.py", thin(policyCases(c.Root, tables, reg, rErr, tmp, req.Diffs), max)},
		{"file-plan", "tests/ci/file_run.py", thin(filePlanCases(c.Root, tables, reg, rErr), max)},
	}
	for _, cmd := range cmds {
		cr := CommandReport{Command: cmd.name, Differences: []Difference{}}
		if _, err := os.Stat(filepath.Join(c.Root, filepath.FromSlash(cmd.entry))); err != nil {
			cr.NotCompared = "the checkout has no " + cmd.entry
			rep.Commands = append(rep.Commands, cr)
			continue
		}
		asks := make([]checkoutpy.Case, len(cmd.cases))
		for i, vc := range cmd.cases {
			asks[i] = vc.ask
		}
		answers, err := ask(ctx, c, asks, func(done int) {
			if req.Progress != nil {
				req.Progress(cmd.name, done, len(asks))
			}
		}, req.Progress != nil)
		if err != nil {
			return rep, fmt.Errorf("verify %s: %w", cmd.name, err)
		}
		if cmd.name != "plan" && silent(answers) {
			cr.NotCompared = fmt.Sprintf("the checkout's %s wrote no step outputs for any case; it is not the workflow step miles-ci knows", cmd.entry)
			rep.Commands = append(rep.Commands, cr)
			continue
		}
		cr.Cases = len(cmd.cases)
		for i, vc := range cmd.cases {
			goText, goErr := "", tErr
			if goErr == nil {
				goText, goErr = vc.goAns()
			}
			// miles-ci declining the checkout's form, or failing to read it at
			// all, is said once, not per case.
			if ahead := (*policy.AheadError)(nil); errors.As(goErr, &ahead) {
				cr.Declined, cr.NotAnswered = goErr.Error(), cr.NotAnswered+1
				continue
			}
			if goErr != nil && rErr != nil && goErr.Error() == rErr.Error() {
				// Said once; the case is still compared, as the checkout
				// may refuse it for the same fault.
				cr.MilesCIError, cr.MilesCIFailed = rErr.Error(), cr.MilesCIFailed+1
			}
			judge := vc.judge
			if judge == nil {
				judge = exactJudge
			}
			agree, purpose, checkoutText := judge(goText, goErr, answers[i])
			switch {
			case agree:
				cr.Agree++
				if purpose {
					cr.OnPurpose++
				}
			default:
				cr.Differences = append(cr.Differences, Difference{Case: vc.name, MilesCI: answerOrError(goText, goErr), Checkout: checkoutText, Failed: failedSide(goErr, answers[i])})
			}
		}
		if cmd.name == "file-plan" && cr.OnPurpose > 0 {
			cr.Purpose = "miles-ci runs a ROCm-only file (rules §10), which the checkout's file_run refuses"
		}
		rep.Commands = append(rep.Commands, cr)
	}
	return rep, nil
}

// ask asks the checkout every case: at once, or with batched in up to
// progressSteps batches of at least minBatch cases, telling done the count
// answered after each.
func ask(ctx context.Context, c *checkoutpy.Checkout, cases []checkoutpy.Case, done func(int), batched bool) ([]checkoutpy.Answer, error) {
	done(0)
	size := len(cases)
	if batched {
		// A batch is a process: at least minBatch cases keep their cost small.
		size = max(minBatch, (len(cases)+progressSteps-1)/progressSteps)
	}
	var answers []checkoutpy.Answer
	for start := 0; ; start += size {
		// No case still asks once: the checkout's Python must start.
		end := min(start+size, len(cases))
		a, err := c.Ask(ctx, cases[start:end])
		if err != nil {
			return nil, err
		}
		answers = append(answers, a...)
		done(end)
		if end >= len(cases) {
			return answers, nil
		}
	}
}

// silent reports that no case wrote a step output or failed: the module ran
// and did nothing (it has no main).
func silent(answers []checkoutpy.Answer) bool {
	for _, a := range answers {
		if a.GitHubOutput != "" || a.Exit != 0 {
			return false
		}
	}
	return true
}

func answerOrError(text string, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return text
}

// exactJudge: the same stdout, or both refuse (the checkout exits non-zero
// and miles-ci returns an error; the wording differs on purpose).
func exactJudge(goText string, goErr error, a checkoutpy.Answer) (bool, bool, string) {
	if usageError(a) {
		return false, false, fmt.Sprintf("the checkout refuses the workflow's command line (exit %d): %s", a.Exit, a.LastLine())
	}
	if a.Exit != 0 {
		return goErr != nil, false, fmt.Sprintf("error (exit %d): %s", a.Exit, a.LastLine())
	}
	return goErr == nil && goText == a.Stdout, false, a.Stdout
}

// usageError reports an argparse usage error: the checkout's CLI is not the
// one miles-ci's cases are written for, never an agreeing refusal.
func usageError(a checkoutpy.Answer) bool {
	return a.Exit == 2 && strings.Contains(a.Stderr, "usage: ")
}

// outputsJudge compares the step outputs the checkout wrote with miles-ci's.
func outputsJudge(goText string, goErr error, a checkoutpy.Answer) (bool, bool, string) {
	if a.Exit != 0 {
		return goErr != nil, false, fmt.Sprintf("error (exit %d): %s", a.Exit, a.LastLine())
	}
	return goErr == nil && goText == a.GitHubOutput, false, a.GitHubOutput
}

// thin keeps at most max cases, evenly spread over the generated order.
func thin(cases []verifyCase, max int) []verifyCase {
	if len(cases) <= max {
		return cases
	}
	out := make([]verifyCase, 0, max)
	for i := 0; i < max; i++ {
		out = append(out, cases[i*len(cases)/max])
	}
	return out
}

// labelSets are the raw label sets the cases use: none, each known label's
// run-ci-X, the scope labels, the workflow-only ones, run-on-<arch> and
// run-ci-blackwell-only where the checkout has arches, an unknown run-ci
// label, a label without the prefix, and a pair.
func labelSets(t *policy.Tables) [][]string {
	sets := [][]string{{}}
	known := t.KnownLabels()
	for _, l := range known {
		sets = append(sets, []string{"run-ci-" + l})
	}
	sets = append(sets, []string{policy.LabelRunAll}, []string{policy.LabelRunImage}, []string{policy.LabelBypassFastfail},
		[]string{policy.LabelNightly}, []string{"run-ci-no-such-label"}, []string{"documentation"})
	for _, a := range t.Arches {
		sets = append(sets, []string{"run-on-" + a})
	}
	if len(t.Arches) > 0 {
		sets = append(sets, []string{"run-ci-blackwell-only"})
		if len(known) > 0 {
			sets = append(sets, []string{"run-ci-" + known[0], "run-on-" + t.Arches[len(t.Arches)-1]})
		}
	}
	if len(known) > 1 {
		sets = append(sets, []string{"run-ci-" + known[0], "run-ci-" + known[1], policy.LabelBypassFastfail})
	}
	return sets
}

var cadences = []policy.Cadence{policy.Regular, policy.Nightly, policy.Weekly, policy.Release}

func planCases(t *policy.Tables, reg *policy.Registry, regErr error) []verifyCase {
	var out []verifyCase
	add := func(r policy.PlanRequest) {
		out = append(out, verifyCase{
			name: "plan " + strings.Join(checkoutpy.SuiteArgv(r), " "),
			ask:  checkoutpy.PlanCase(r),
			goAns: func() (string, error) {
				if reg == nil {
					return "", regErr
				}
				p, err := policy.BuildPlan(reg, r)
				if err != nil {
					return "", err
				}
				return p.Text(), nil
			},
		})
	}
	sets := labelSets(t)
	for _, b := range policy.Backends() {
		for _, s := range t.Suites.Of(b) {
			for _, c := range cadences {
				for _, l := range sets {
					add(policy.PlanRequest{HW: b, Suite: s, Cadence: c, Labels: l})
				}
				add(policy.PlanRequest{HW: b, Suite: s, Cadence: c, Labels: []string{}, MatchAllLabels: true})
			}
		}
	}
	// Every shard of every sharded stage, under a few label sets.
	few := [][]string{{}, {policy.LabelRunAll}}
	if len(sets) > 2 {
		few = append(few, sets[1], sets[len(sets)/2])
	}
	for _, st := range t.Stages() {
		if st.Backend == "" || st.External {
			continue
		}
		for _, c := range cadences {
			n := st.ShardsFor(c)
			for _, l := range few {
				for i := 0; i < n && n > 1; i++ {
					add(policy.PlanRequest{HW: st.Backend, Suite: st.Name, Cadence: c, Labels: l, Partition: &policy.Partition{ID: i, Size: n}})
				}
			}
		}
	}
	add(policy.PlanRequest{HW: policy.CUDA, Suite: "stage-z-no-such-suite", Cadence: policy.Regular, Labels: []string{}})
	return out
}

func policyCases(root string, t *policy.Tables, reg *policy.Registry, regErr error, tmp string, extra []NamedDiff) []verifyCase {
	var out []verifyCase
	n := 0
	diffFile := func(d []byte) string {
		n++
		path := filepath.Join(tmp, "diff-"+strconv.Itoa(n)+".z")
		if d != nil {
			os.WriteFile(path, d, 0o600) // a failed write is a missing diff, a case of its own
		}
		return path
	}
	add := func(name string, trig policy.Trigger, diff []byte) {
		diffPath := diffFile(diff)
		out = append(out, verifyCase{
			name: name,
			ask:  checkoutpy.PolicyCase(trig, diff),
			goAns: func() (string, error) {
				req := PolicyRequest{Repo: root, Tables: t, Trigger: trig, Registry: func() (*policy.Registry, error) { return reg, regErr }, ReadDiff: func() ([]byte, string, error) {
					d, why := ReadChangedFiles(diffPath, "--changed-files "+diffPath)
					return d, why, nil
				}}
				ans, err := Policy(req)
				if err != nil {
					return "", err
				}
				var b strings.Builder
				for _, o := range ans.Outputs.StepOutputs() {
					b.WriteString(o.Key + "=" + o.Value + "\n")
				}
				return b.String(), nil
			},
			judge: outputsJudge,
		})
	}
	diffs := append(generatedDiffs(t, reg), extra...)
	for _, l := range labelSets(t) {
		js, _ := json.Marshal(l)
		for _, d := range diffs {
			add(fmt.Sprintf("policy --event pull_request --pr-labels-json '%s' --changed-files %s", js, d.Name),
				policy.Trigger{Event: policy.EventPullRequest, PRLabelsJSON: string(js)}, d.Diff)
		}
	}
	var none []byte
	add("policy --event pull_request --pr-labels-json 'not json'", policy.Trigger{Event: policy.EventPullRequest, PRLabelsJSON: "not json"}, none)
	for _, c := range t.Crons {
		add("policy --event schedule --schedule '"+c.Cron+"'", policy.Trigger{Event: policy.EventSchedule, Schedule: c.Cron}, none)
	}
	add("policy --event schedule --schedule '0 0 * * *'", policy.Trigger{Event: policy.EventSchedule, Schedule: "0 0 * * *"}, none)
	add("policy --event workflow_dispatch", policy.Trigger{Event: "workflow_dispatch"}, none)
	add("policy --event push", policy.Trigger{Event: "push"}, none)
	for _, c := range append(cadences, "hourly") {
		add("policy --event workflow_dispatch --cadence-override "+string(c), policy.Trigger{Event: "workflow_dispatch", CadenceOverride: string(c)}, none)
	}
	if len(diffs) > 1 {
		add("policy --event pull_request --cadence-override weekly --changed-files "+diffs[1].Name,
			policy.Trigger{Event: policy.EventPullRequest, PRLabelsJSON: "[]", CadenceOverride: "weekly"}, diffs[1].Diff)
	}
	return out
}

// generatedDiffs are the changed-files diffs of the policy cases: none, an
// empty one, a malformed one, docs only, a source file, and for each PR GPU
// stage one of its registered test files (also renamed).
func generatedDiffs(t *policy.Tables, reg *policy.Registry) []NamedDiff {
	entry := func(parts ...string) []byte { return []byte(strings.Join(parts, "\x00") + "\x00") }
	out := []NamedDiff{
		{Name: "(missing)", Diff: nil},
		{Name: "(empty)", Diff: []byte{}},
		{Name: "(malformed)", Diff: []byte("Q\x00x.py\x00")},
		{Name: "docs/guide.md", Diff: entry("M", "docs/guide.md")},
		{Name: "miles/backends/x.py", Diff: entry("M", "miles/backends/x.py")},
	}
	if reg == nil {
		return out
	}
	seen := map[string]bool{}
	for _, s := range t.PRGPUStages() {
		for _, r := range reg.Registrations {
			if r.Suite == s && !seen[r.File] {
				seen[r.File] = true
				out = append(out, NamedDiff{Name: r.File, Diff: entry("M", r.File)})
				break
			}
		}
	}
	files := make([]string, 0, len(seen))
	for f := range seen {
		files = append(files, f)
	}
	sort.Strings(files)
	if len(files) > 0 {
		out = append(out, NamedDiff{Name: "R100 " + files[0] + " -> docs/moved.md", Diff: entry("R100", files[0], "docs/moved.md")})
	}
	return out
}

func filePlanCases(root string, t *policy.Tables, reg *policy.Registry, regErr error) []verifyCase {
	lookup := func(string) (*policy.Registry, error) { return reg, regErr } // read once, asked per file
	files, err := policy.Discover(root)
	if err != nil {
		files = nil
	}
	var out []verifyCase
	add := func(file, tag string) {
		name := "file-plan --file " + file
		if tag != "" {
			name += " --image-tag '" + tag + "'"
		}
		out = append(out, verifyCase{
			name: name,
			ask:  checkoutpy.FileRunCase(file, tag),
			goAns: func() (string, error) {
				fp, err := deps.PlanFile(deps.FileRequest{Root: root, File: file, ImageTag: tag, Tables: t}, lookup)
				if err != nil {
					return "", err
				}
				runsOn := ""
				if !policy.ProfileOf(fp.HW).Hosted {
					runsOn = pysource.JSONList(fp.RunsOn)
				}
				text := fmt.Sprintf("hw=%s\nsuite=%s\nruns_on=%s\ncontainer_image=%s\ntimeout_seconds=%d\n", fp.HW, fp.Suite, runsOn, fp.ContainerImage, fp.TimeoutSeconds)
				if fp.NumGPUs > 0 {
					text += fmt.Sprintf("num_gpus=%d\n", fp.NumGPUs)
				}
				return text, nil
			},
			judge: fileRunJudge,
		})
	}
	for _, f := range files {
		add(f, "")
	}
	if len(files) > 0 {
		add(files[len(files)-1], "my-tag_1.2")
		add(files[len(files)-1], "bad tag")
	}
	add("tests/e2e/test_no_such_file.py", "")
	return out
}

// fileRunJudge is outputsJudge, except that a ROCm-only file that
// miles-ci plans and the checkout refuses agrees on purpose (rules §10).
func fileRunJudge(goText string, goErr error, a checkoutpy.Answer) (bool, bool, string) {
	if a.Exit != 0 && goErr == nil && strings.HasPrefix(goText, "hw=rocm\n") && strings.Contains(a.Stderr, "registered only for ROCm") {
		return true, true, a.LastLine()
	}
	return outputsJudge(goText, goErr, a)
}
