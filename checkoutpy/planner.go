package checkoutpy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// The checkout's entry points, as its workflows run them (.github/workflows:
// python tests/ci/run_suite.py ..., python -m tests.ci.ci_policy, python3 -S
// -m tests.ci.file_run).
const (
	RunSuiteScript = "tests/ci/run_suite.py"
	PolicyModule   = "tests.ci.ci_policy"
	FileRunModule  = "tests.ci.file_run"
)

// CheckoutError is the checkout's own code refusing a question: what it ran,
// its exit status and the last line it printed on stderr. It is the
// checkout's answer, not a fault of miles-ci.
type CheckoutError struct {
	// Command is the command line as the workflow runs it.
	Command string
	// Answer is what it printed.
	Answer Answer
}

func (e *CheckoutError) Error() string {
	msg := fmt.Sprintf("the checkout's own %s exited %d", e.Command, e.Answer.Exit)
	if l := e.Answer.LastLine(); l != "" {
		msg += ": " + strings.TrimPrefix(l, "::error::")
	}
	return msg
}

// SuiteArgv is run_suite.py's command line for a plan request, as the
// stage jobs pass it (rules §1), with --list-only.
func SuiteArgv(req policy.PlanRequest) []string {
	argv := []string{"--hw", string(req.HW), "--suite", req.Suite}
	if req.Partition != nil {
		argv = append(argv, "--auto-partition-id", strconv.Itoa(req.Partition.ID), "--auto-partition-size", strconv.Itoa(req.Partition.Size))
	}
	argv = append(argv, "--cadence", string(orRegular(req.Cadence)))
	argv = append(argv, "--labels") // the stage jobs always pass it, often with no label
	argv = append(argv, req.Labels...)
	if req.MatchAllLabels {
		argv = append(argv, "--match-all-labels")
	}
	if req.ContinueOnError {
		argv = append(argv, "--continue-on-error")
	}
	return append(argv, "--list-only")
}

func orRegular(c policy.Cadence) policy.Cadence {
	if c == "" {
		return policy.Regular
	}
	return c
}

// PlanCase is the case that asks the checkout's run_suite.py for a plan.
func PlanCase(req policy.PlanRequest) Case {
	return Case{Script: RunSuiteScript, Argv: SuiteArgv(req)}
}

// CheckoutPlan is the checkout's own plan of one suite shard.
type CheckoutPlan struct {
	// Text is what run_suite.py --list-only printed, byte for byte.
	Text string
	// Plan is Text read back as miles-ci's plan (its JSON form); the
	// labels and nightly flag of each enabled test come from the checkout's
	// registry. Nil when Text is in a form miles-ci cannot read (ReadErr).
	Plan    *policy.Plan
	ReadErr error
}

// CheckoutPlans asks the checkout's run_suite.py --list-only for each plan
// request, in one interpreter. A request the checkout refuses is a
// *CheckoutError naming its command line.
func (c *Checkout) Plans(ctx context.Context, reqs []policy.PlanRequest) ([]CheckoutPlan, error) {
	cases := []Case{{Registry: true}}
	for _, r := range reqs {
		cases = append(cases, PlanCase(r))
	}
	answers, err := c.Ask(ctx, cases)
	if err != nil {
		return nil, err
	}
	regs := answers[0].Registrations // nil when the checkout's registry has another shape
	out := make([]CheckoutPlan, 0, len(reqs))
	for i, r := range reqs {
		a := answers[i+1]
		if a.Exit != 0 {
			return nil, &CheckoutError{Command: "python " + RunSuiteScript + " " + strings.Join(SuiteArgv(r), " "), Answer: a}
		}
		p, err := readListOnly(a.Stdout, regs)
		out = append(out, CheckoutPlan{Text: a.Stdout, Plan: p, ReadErr: err})
	}
	return out, nil
}

// readListOnly reads the checkout's run_suite.py --list-only text with
// report.ReadListOnly, the one reader of it; the checkout planner's text must
// have its "Policy: " and "Hardware: " lines. regs supply each enabled
// test's labels and nightly flag, which the text does not print.
func readListOnly(text string, regs []PyRegistration) (*policy.Plan, error) {
	p, err := report.ReadListOnly(text)
	if err != nil {
		return nil, err
	}
	if p.Cadence == "" {
		return nil, errors.New("run_suite.py --list-only output has no \"Policy: \" line")
	}
	if p.Suite == "" {
		return nil, errors.New("run_suite.py --list-only output has no \"Hardware: \" line")
	}
	for i, t := range p.Enabled {
		for _, r := range regs {
			if r.File == t.File && r.Suite == p.Suite && strings.EqualFold(r.Backend, string(p.HW)) {
				p.Enabled[i].Labels, p.Enabled[i].Nightly = append([]string{}, r.Labels...), r.Nightly
				break
			}
		}
	}
	return p, nil
}

// PolicyCase is the case that asks the checkout's ci_policy for the
// resolve-ci-policy step's outputs. CHANGED_FILES_PATH is always set, as the
// workflow does; its file holds diff, and is missing when diff is nil (the
// workflow's failed git diff).
func PolicyCase(t policy.Trigger, diff []byte) Case {
	c := Case{Module: PolicyModule, ChangedFilesEnv: "CHANGED_FILES_PATH", Env: map[string]string{
		"EVENT_NAME":       t.Event,
		"SCHEDULE":         t.Schedule,
		"PR_LABELS_JSON":   t.PRLabelsJSON,
		"CADENCE_OVERRIDE": t.CadenceOverride,
	}}
	if diff != nil {
		c.Diff = &diff
	}
	return c
}

// CheckoutPolicy is the checkout's own resolve-ci-policy answer.
type CheckoutPolicy struct {
	// Text is what ci_policy printed.
	Text string
	// Lines are its step outputs, in the order it wrote them.
	Lines []KV
	// Outputs are the four outputs of rules §3 read from Lines.
	Outputs policy.Outputs
}

// MarshalJSON writes the outputs as `miles-ci policy --json` does, then any
// other output the checkout writes (e.g. needs_cuda_image), as a string.
func (p CheckoutPolicy) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString("{")
	known := map[string]bool{"cadence": true, "raw_labels": true, "bypass_fastfail": true, "skipped_stages": true, "needs_cuda_image": true}
	base, err := json.Marshal(p.Outputs)
	if err != nil {
		return nil, err
	}
	b.Write(base[1 : len(base)-1])
	for _, kv := range p.Lines {
		if known[kv.Key] {
			continue
		}
		k, _ := json.Marshal(kv.Key)
		v, _ := json.Marshal(kv.Value)
		b.WriteString("," + string(k) + ":" + string(v))
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

// ReadPolicyOutputs reads ci_policy's step outputs into the four of rules §3.
func ReadPolicyOutputs(lines []KV) (policy.Outputs, error) {
	out := policy.Outputs{RawLabels: []string{}, SkippedStages: []string{}}
	seen := map[string]bool{}
	for _, kv := range lines {
		seen[kv.Key] = true
		switch kv.Key {
		case "cadence":
			out.Cadence = policy.Cadence(kv.Value)
		case "raw_labels":
			out.RawLabels = strings.Fields(kv.Value)
		case "bypass_fastfail":
			out.BypassFastfail = kv.Value == "true"
		case "skipped_stages":
			if err := json.Unmarshal([]byte(kv.Value), &out.SkippedStages); err != nil {
				return out, fmt.Errorf("skipped_stages=%s is not a JSON list of stage names", kv.Value)
			}
		case "needs_cuda_image":
			needs := kv.Value == "true"
			out.NeedsCUDAImage = &needs
		}
	}
	for _, k := range []string{"cadence", "raw_labels", "bypass_fastfail", "skipped_stages"} {
		if !seen[k] {
			return out, fmt.Errorf("the checkout's %s wrote no %s= step output; it is not the resolve-ci-policy step miles-ci knows", PolicyModule, k)
		}
	}
	return out, nil
}

// Policy asks the checkout's ci_policy, as the resolve-ci-policy step runs
// it. diff is the changed-files diff of a pull request (nil: none, the
// workflow's failed git diff).
func (c *Checkout) Policy(ctx context.Context, t policy.Trigger, diff []byte) (CheckoutPolicy, error) {
	answers, err := c.Ask(ctx, []Case{PolicyCase(t, diff)})
	if err != nil {
		return CheckoutPolicy{}, err
	}
	a := answers[0]
	if a.Exit != 0 {
		return CheckoutPolicy{}, &CheckoutError{Command: "python -m " + PolicyModule, Answer: a}
	}
	ans := CheckoutPolicy{Text: a.Stdout, Lines: a.Outputs()}
	if ans.Outputs, err = ReadPolicyOutputs(ans.Lines); err != nil {
		return CheckoutPolicy{}, err
	}
	return ans, nil
}

// FileRunCase is the case that asks the checkout's file_run for a
// single-file plan; tag is the dispatch input ci_image_tag ("" = dev).
// CI_SOURCE_ROOT is the checkout itself, the driver's working folder.
func FileRunCase(file, tag string) Case {
	return Case{Module: FileRunModule, Env: map[string]string{"TEST_FILE": file, "CI_IMAGE_TAG": tag, "CI_SOURCE_ROOT": "."}}
}

// FilePlan asks the checkout's file_run for the plan of a single-file run
// (rules §10). The image tag is the one the /rerun-test gateway passes: tag,
// else the PR body's ci-image-tag line, else none (file_run's dev).
func (c *Checkout) FilePlan(ctx context.Context, file, tag, prBody string) (deps.FilePlan, []KV, error) {
	if tag == "" {
		if d, ok := deps.FirstDirective(prBody, deps.KeyImageTag); ok {
			tag = d.Value
		}
	}
	answers, err := c.Ask(ctx, []Case{FileRunCase(file, tag)})
	if err != nil {
		return deps.FilePlan{}, nil, err
	}
	a := answers[0]
	if a.Exit != 0 {
		return deps.FilePlan{}, nil, &CheckoutError{Command: "python3 -S -m " + FileRunModule, Answer: a}
	}
	lines := a.Outputs()
	fp, err := ReadFileRunOutputs(file, lines)
	return fp, lines, err
}

// ReadFileRunOutputs reads file_run's step outputs (hw, suite, runs_on,
// container_image, timeout_seconds) into a single-file plan; the command is
// the one the file-run workflow builds from them (rules §10).
func ReadFileRunOutputs(file string, lines []KV) (deps.FilePlan, error) {
	fp := deps.FilePlan{File: file, RunsOn: []string{}}
	seen := map[string]bool{}
	for _, kv := range lines {
		seen[kv.Key] = true
		switch kv.Key {
		case "hw":
			fp.HW = policy.Backend(kv.Value)
		case "suite":
			fp.Suite = kv.Value
		case "runs_on":
			if kv.Value != "" {
				if err := json.Unmarshal([]byte(kv.Value), &fp.RunsOn); err != nil {
					return fp, fmt.Errorf("runs_on=%s is not a JSON list of runner labels", kv.Value)
				}
			}
		case "container_image":
			fp.ContainerImage = kv.Value
		case "timeout_seconds":
			n, err := strconv.Atoi(kv.Value)
			if err != nil {
				return fp, fmt.Errorf("timeout_seconds=%s is not a number of seconds", kv.Value)
			}
			fp.TimeoutSeconds = n
		}
	}
	for _, k := range []string{"hw", "suite", "runs_on", "container_image", "timeout_seconds"} {
		if !seen[k] {
			return fp, fmt.Errorf("the checkout's %s wrote no %s= step output; it is not the resolve-file-run step miles-ci knows", FileRunModule, k)
		}
	}
	fp.Command = policy.ProfileOf(fp.HW).FileCommand(file)
	return fp, nil
}

// ExplainVerdict is one registration of a file as the checkout's own plans
// show it.
type ExplainVerdict struct {
	Registration PyRegistration `json:"registration"`
	// Verdict is enabled, skipped or not-selected.
	Verdict string `json:"verdict"`
	// Reason says why, from the checkout's --list-only output.
	Reason string `json:"reason"`
	// Shard is the 0-based shard that runs it, when the stage is sharded.
	Shard *policy.Partition `json:"shard,omitempty"`
}

// Explain says, from the checkout's own registry and run_suite.py
// --list-only, how each registration of file fares under the request's
// cadence and labels; shards gives the shard count of each suite (from the
// roster; a suite without one is planned unpartitioned).
func (c *Checkout) Explain(ctx context.Context, file string, base policy.PlanRequest, shards func(suite string) int) ([]ExplainVerdict, error) {
	answers, err := c.Ask(ctx, []Case{{Registry: true}})
	if err != nil {
		return nil, err
	}
	if answers[0].Exit != 0 {
		return nil, &CheckoutError{Command: "collect_tests(discover_ci_files()) of tests/ci/ci_register.py", Answer: answers[0]}
	}
	var regs []PyRegistration
	for _, r := range answers[0].Registrations {
		if r.File == file {
			regs = append(regs, r)
		}
	}
	if len(regs) == 0 {
		return nil, fmt.Errorf("%s has no registration in the checkout's own registry (collect_tests of tests/ci/ci_register.py)", file)
	}
	var reqs []policy.PlanRequest
	for _, r := range regs {
		req := base
		req.HW, req.Suite, req.Partition = policy.Backend(strings.ToLower(r.Backend)), r.Suite, nil
		reqs = append(reqs, req)
		for i := 0; i < shards(r.Suite) && shards(r.Suite) > 1; i++ {
			req.Partition = &policy.Partition{ID: i, Size: shards(r.Suite)}
			reqs = append(reqs, req)
		}
	}
	plans, err := c.Plans(ctx, reqs)
	if err != nil {
		return nil, err
	}
	var out []ExplainVerdict
	k := 0
	for _, r := range regs {
		full := plans[k]
		k++
		v := ExplainVerdict{Registration: r, Verdict: "not-selected",
			Reason: fmt.Sprintf("the checkout's run_suite.py --list-only of %s does not list it under cadence %s and labels %v", r.Suite, orRegular(base.Cadence), base.Labels)}
		if full.Plan == nil {
			return nil, full.ReadErr
		}
		for _, s := range full.Plan.Skipped {
			if s.File == file {
				v.Verdict, v.Reason = "skipped", "disabled: "+s.Reason
			}
		}
		if slices.ContainsFunc(full.Plan.Enabled, func(t policy.PlannedTest) bool { return t.File == file }) {
			v.Verdict, v.Reason = "enabled", fmt.Sprintf("the checkout's run_suite.py --list-only of %s lists it (include_labels=%v)", r.Suite, full.Plan.IncludeLabels)
		}
		n := shards(r.Suite)
		for i := 0; i < n && n > 1; i++ {
			p := plans[k]
			k++
			if p.Plan != nil && v.Verdict == "enabled" && slices.ContainsFunc(p.Plan.Enabled, func(t policy.PlannedTest) bool { return t.File == file }) {
				v.Shard = p.Plan.Partition
			}
		}
		out = append(out, v)
	}
	return out, nil
}
