package ghoutput

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// markdownText escapes what would be markup in Markdown text: HTML (as
// entities), the punctuation of emphasis, links, images, code and tables
// (with a backslash), and the starts of GitHub's bare links (http://,
// https://, www.).
var markdownText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`,
	"[", `\[`, "]", `\]`, "!", `\!`, "~", `\~`, "|", `\|`, "://", `\://`, "www.", `www\.`, "WWW.", `WWW\.`)

// text makes untrusted text (a skip reason, a note that quotes the
// container) one line of plain Markdown text: nothing in it renders as
// HTML, a link, an image or emphasis.
func text(s string) string {
	return markdownText.Replace(report.Printable(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)))
}

// code renders s as an inline code span that survives backticks and pipes.
func code(s string) string {
	s = report.Printable(cell(s))
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func codeList(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = code(s)
	}
	return strings.Join(out, ", ")
}

func seconds(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " s" }

// bodyLine returns line n (1-based) of a PR body, without its line break.
func bodyLine(body string, n int) string {
	for i := 1; ; i++ {
		line, rest, more := strings.Cut(body, "\n")
		if i == n {
			return strings.TrimSuffix(line, "\r")
		}
		if !more {
			return ""
		}
		body = rest
	}
}

// fromText says where a decision came from, quoting the PR-body line.
func fromText(src deps.Source, line int, body string) string {
	switch src {
	case deps.FromPRBody:
		return fmt.Sprintf("PR body line %d: %s", line, code(bodyLine(body, line)))
	case deps.FromInput:
		return "the dispatch input"
	case deps.FromCalled:
		return "the called workflow's input"
	case deps.FromPRImage:
		return "this PR's own image"
	case deps.FromLockfile:
		return code(deps.LockFileName)
	case deps.FromDefault:
		return "the default"
	case deps.FromBaked:
		return "the copy baked into the image"
	}
	return string(src)
}

// PolicyReport is what the policy section shows.
type PolicyReport struct {
	// Trigger says what the policy was resolved for, e.g. "pull request radixark/miles#2874 at 5f1d0c7e2b9a".
	Trigger string
	// Policy is the resolved workflow policy.
	Policy policy.WorkflowPolicy
	// Selection is the PR stage selection; nil outside pull_request.
	Selection *policy.StageSelection
	// Roster is the stage roster the workflows run.
	Roster []policy.Stage
}

// Verdicts is, for every stage of the roster that Miles' workflows run,
// whether it runs under the report's policy and why (policy.StageVerdicts).
func (r PolicyReport) Verdicts() []policy.StageVerdict {
	return policy.StageVerdicts(r.Policy, r.Selection, r.Roster)
}

// Markdown renders the policy section: the policy, each stage with whether
// it runs and why, and a Mermaid graph of the stage DAG.
func (r PolicyReport) Markdown() string {
	var b strings.Builder
	b.WriteString("### Miles CI policy\n\n")
	if r.Trigger != "" {
		fmt.Fprintf(&b, "For %s: ", r.Trigger)
	}
	fmt.Fprintf(&b, "cadence %s, labels %s, bypass_fastfail %t.\n\n", code(string(r.Policy.Cadence)), codeList(r.Policy.RawLabels), r.Policy.BypassFastfail)
	verdicts := r.Verdicts()
	b.WriteString("| stage | backend | runs on | shards | runs | why |\n|---|---|---|---:|---|---|\n")
	for _, v := range verdicts {
		runs := "✅ yes"
		if !v.Runs {
			runs = "⏭️ skipped"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s |\n", code(v.Stage.Name), v.Stage.Backend, codeList(v.Stage.RunsOn), v.Stage.Shards, runs, cell(v.Why))
	}
	b.WriteString("\n")
	b.WriteString(Mermaid(verdicts))
	return b.String()
}

// Mermaid renders the stage DAG (jobs and their needs) as a Mermaid
// flowchart; skipped stages are drawn dashed.
func Mermaid(verdicts []policy.StageVerdict) string {
	ids := map[string]string{}
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart LR\n")
	node := func(name, label string) string {
		if id, ok := ids[name]; ok {
			return id
		}
		id := fmt.Sprintf("n%d", len(ids))
		ids[name] = id
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", id, strings.ReplaceAll(label, `"`, "#quot;"))
		return id
	}
	for _, v := range verdicts {
		for _, need := range v.Stage.Needs {
			node(need, need)
		}
	}
	var skipped []string
	for _, v := range verdicts {
		label := v.Stage.Name
		if v.Stage.Shards > 1 {
			label += fmt.Sprintf(" ×%d", v.Stage.Shards)
		}
		id := node(v.Stage.Name, label)
		if !v.Runs {
			skipped = append(skipped, id)
		}
	}
	for _, v := range verdicts {
		for _, need := range v.Stage.Needs {
			fmt.Fprintf(&b, "  %s --> %s\n", ids[need], ids[v.Stage.Name])
		}
	}
	if len(skipped) > 0 {
		b.WriteString("  classDef skipped stroke-dasharray: 5 5,color:#888\n")
		fmt.Fprintf(&b, "  class %s skipped\n", strings.Join(skipped, ","))
	}
	b.WriteString("```\n\n")
	return b.String()
}

// PlanMarkdown renders the plans of shards: each shard's files with their
// estimated time, and the disabled tests with why.
func PlanMarkdown(plans []*policy.Plan) string {
	var b strings.Builder
	for _, p := range plans {
		shard := "not sharded"
		if p.Partition != nil {
			shard = p.Partition.String()
		}
		fmt.Fprintf(&b, "### %s (%s), %s\n\n", code(p.Suite), p.HW, shard)
		fmt.Fprintf(&b, "Cadence %s, include labels %s: %d test(s), est total %s.\n\n", code(string(p.Cadence)), codeList(p.IncludeLabels), len(p.Enabled), seconds(p.EstTotal))
		if len(p.Enabled) > 0 {
			b.WriteString("| file | est time | labels |\n|---|---:|---|\n")
			for _, t := range p.Enabled {
				labels := codeList(t.Labels)
				if t.Implicit {
					labels = "implicit"
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", code(t.File), seconds(t.EstTime), labels)
			}
			b.WriteString("\n")
		}
		b.WriteString(disabledList(p.Skipped))
	}
	return b.String()
}

// ImageMarkdown renders the image decision with the line its tag came from.
func ImageMarkdown(img deps.Image, body string) string {
	return fmt.Sprintf("### CI image\n\n%s, tag from %s.\n\n", code(img.Image), fromText(img.Source, img.Line, body))
}

// DepsMarkdown renders the dependency refs with the line each came from and
// what GitHub says of a #N ref.
func DepsMarkdown(backend policy.Backend, d deps.Decision, body string, lookups []github.DependencyPR) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Dependency refs (%s)\n\n", backend)
	if !d.Install {
		b.WriteString("No ref is named: both dependencies keep the copies baked into the image.\n\n")
	}
	b.WriteString("| dependency | ref | git fetch | from | pull request |\n|---|---|---|---|---|\n")
	for _, side := range []struct {
		name, repo string
		ref        deps.Ref
	}{{"sglang", deps.SGLangRepo, d.SGLang}, {"megatron", deps.MegatronRepo, d.Megatron}} {
		pr := ""
		for _, l := range lookups {
			if l.Dependency == side.name {
				pr = cell(l.String())
			}
		}
		ref, fetch := code(side.ref.Ref), code(side.ref.Fetch)
		if side.ref.Source == deps.FromBaked {
			ref, fetch = "baked", "none"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", code(side.repo), ref, fetch, fromText(side.ref.Source, side.ref.Line, body), pr)
	}
	b.WriteString("\n")
	for _, w := range d.Warnings {
		fmt.Fprintf(&b, "> [!WARNING]\n> %s\n\n", cell(w))
	}
	return b.String()
}

// ExplainMarkdown renders why one file runs, is skipped or is not selected.
func ExplainMarkdown(fe policy.FileExplanation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Why %s runs or not\n\nCadence %s, include labels %s.\n\n", code(fe.File), code(string(fe.Policy.Cadence)), codeList(fe.Policy.IncludeLabels))
	b.WriteString("| registration | stage | verdict | why |\n|---|---|---|---|\n")
	for _, e := range fe.Registrations {
		r := e.Registration
		reg := fmt.Sprintf("%s line %d", r.Backend, r.Line)
		if r.Implicit {
			reg = "implicit (tests/fast/)"
		}
		stage := "none"
		if e.Stage != nil {
			stage = code(e.Stage.Name)
		}
		if e.Shard != nil {
			stage += ", " + e.Shard.String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", reg, stage, e.Verdict, cell(e.Reason))
	}
	b.WriteString("\n")
	return b.String()
}

// FilePlanMarkdown renders the plan of a single-file run.
func FilePlanMarkdown(p deps.FilePlan, body string, imageLine int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Single-file run of %s\n\n", code(p.File))
	fmt.Fprintf(&b, "- stage: %s (%s) on %s\n", code(p.Suite), p.HW, codeList(p.RunsOn))
	if p.ContainerImage != "" {
		fmt.Fprintf(&b, "- image: %s, tag from %s\n", code(p.ContainerImage), fromText(p.ImageSource, imageLine, body))
	}
	fmt.Fprintf(&b, "- timeout: %d s\n- command: %s\n\n", p.TimeoutSeconds, code(strings.Join(p.Command, " ")))
	return b.String()
}

// ResultsMarkdown renders a test run's results: each file with its status and time.
func ResultsMarkdown(r *report.Summary) string {
	var b strings.Builder
	verdict := "✅ passed"
	switch {
	case r.Passed:
	case r.Verdict == report.Inconsistent:
		verdict = "❌ failed as inconsistent"
	case r.Verdict == report.TimedOutRun:
		verdict = "⏱️ timed out"
	default:
		verdict = "❌ failed"
	}
	shard := ""
	if r.Shard != nil {
		shard = ", " + r.Shard.String()
	}
	if r.File != "" {
		fmt.Fprintf(&b, "### %s alone on %s (%s): %s\n\n", code(r.File), code(r.Suite), r.HW, verdict)
	} else {
		fmt.Fprintf(&b, "### %s (%s)%s: %s\n\n", code(r.Suite), r.HW, shard, verdict)
	}
	image := "none"
	if r.Image != "" {
		image = code(r.Image)
	}
	var total float64
	for _, t := range r.Tests {
		total += t.ElapsedS
	}
	cadence := ""
	if r.Cadence != "" {
		cadence = "Cadence " + code(string(r.Cadence)) + ", image "
	} else {
		cadence = "Image "
	}
	fmt.Fprintf(&b, "%s%s, exit code %d, %d file(s) in %s.\n\n", cadence, image, r.ExitCode, len(r.Tests), seconds(total))
	if len(r.Tests) > 0 {
		b.WriteString("| file | status | attempts | time | exit code |\n|---|---|---:|---:|---:|\n")
		for _, t := range r.Tests {
			status := string(t.Status)
			switch t.Status {
			case report.Pass:
				status = "✅ pass"
			case report.Fail:
				status = "❌ fail"
			case report.Timeout:
				status = "⏱️ timeout"
				if t.TimeoutS != nil {
					status += " (" + seconds(float64(*t.TimeoutS)) + ")"
				}
			}
			exit := "–"
			if t.ExitCode != nil {
				exit = strconv.Itoa(*t.ExitCode)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", code(t.File), status, t.Attempts, seconds(t.ElapsedS), exit)
		}
		b.WriteString("\n")
	}
	b.WriteString(disabledList(r.Skipped))
	// Inconsistencies and notes quote the checkout and the container (file
	// names, what a test printed): text() renders no HTML, link or
	// emphasis of theirs.
	for _, n := range r.Inconsistent {
		fmt.Fprintf(&b, "> **inconsistent:** %s\n\n", text(n))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "> %s\n\n", text(n))
	}
	b.WriteString(gateMarkdown(r.Gate))
	return capMarkdown(b.String(), MaxStepSummaryBytes)
}

// MaxStepSummaryBytes is GitHub's limit on one step's summary: a larger one
// is not shown at all.
const MaxStepSummaryBytes = 1 << 20

// capMarkdown keeps at most limit bytes of md, cut at a line's end, with a
// last line saying so.
func capMarkdown(md string, limit int) string {
	if len(md) <= limit {
		return md
	}
	const tail = "\n\n> the results are cut here: a step summary is at most 1 MiB on GitHub; summary.json has them all\n"
	cut := md[:limit-len(tail)-64]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	return cut + fmt.Sprintf("\n\n> %d bytes left out", len(md)-len(cut)) + tail
}

// disabledList renders disabled tests with why, or nothing.
func disabledList(skipped []policy.SkippedTest) string {
	if len(skipped) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Disabled:\n\n")
	for _, s := range skipped {
		fmt.Fprintf(&b, "- %s: %s\n", code(s.File), text(s.Reason))
	}
	b.WriteString("\n")
	return b.String()
}
