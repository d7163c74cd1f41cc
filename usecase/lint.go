package usecase

import (
	"fmt"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/policy"
)

// LintAnswer is the drift between a checkout's CI tables, workflows and
// tests (what makes CI skip or mis-run tests), and where each table came from.
type LintAnswer struct {
	Drift []policy.Drift `json:"drift"`
	// Tables say where each table came from.
	Tables []policy.Origin `json:"tables"`
	// NotModelled are the workflow jobs miles-ci does not run (ci names them
	// too); they are reported, not counted as drift.
	NotModelled []cirun.Gap `json:"not_modelled"`
	Messages    []Message   `json:"-"`
	// summary is the last line of the text: what agrees, or how many drifts.
	summary string
}

// OK reports whether the checkout has no drift.
func (a LintAnswer) OK() bool { return len(a.Drift) == 0 }

// Text is the answer as `miles-ci lint` prints it: one line per drift, then
// a summary line.
func (a LintAnswer) Text() string {
	var b strings.Builder
	for _, d := range a.Drift {
		b.WriteString(d.String() + "\n")
	}
	for _, g := range a.NotModelled {
		b.WriteString(g.String() + "\n")
	}
	b.WriteString(a.summary + "\n")
	return b.String()
}

// Annotations is the answer as GitHub Actions workflow commands, for a
// run under Actions: each drift an error on its file and line (a built-in
// table has no file), each job miles-ci does not model a notice on its
// line, then the summary as a notice.
func (a LintAnswer) Annotations() string {
	var b strings.Builder
	for _, d := range a.Drift {
		file := d.File
		if file == "built-in" { // policy.Drift's file of a built-in table
			file = ""
		}
		b.WriteString(ghoutput.Annotation("error", file, d.Line, d.Kind+": "+d.Message))
	}
	for _, g := range a.NotModelled {
		b.WriteString(ghoutput.Annotation("notice", g.File, g.Line, "not-modelled: job "+g.Job+" "+g.Reason))
	}
	b.WriteString(ghoutput.Annotation("notice", "", 0, a.summary))
	return b.String()
}

// Lint reads the checkout at repo (shown names it in messages, see
// LoadTables) and reports its drift.
func Lint(repo, shown string) (LintAnswer, error) {
	tables, reg, msgs, err := loadRegistry(repo, shown)
	ans := LintAnswer{Messages: msgs, Drift: []policy.Drift{}}
	if err != nil {
		return ans, err
	}
	if drift := policy.Lint(reg); drift != nil {
		ans.Drift = drift
	}
	ans.Tables = tables.Origins
	wfs, err := ReadWorkflows(tables)
	if err != nil {
		return ans, err
	}
	ans.NotModelled = cirun.Gaps(wfs, tables.Roster)
	if ans.NotModelled == nil {
		ans.NotModelled = []cirun.Gap{}
	}
	if ans.OK() {
		ans.summary = fmt.Sprintf("no drift: %d suites, %d stages, %d labels, %d registrations agree",
			len(tables.Suites.CPU)+len(tables.Suites.CUDA)+len(tables.Suites.ROCM), len(tables.Roster), len(tables.Labels), len(reg.Registrations))
	} else {
		ans.summary = fmt.Sprintf("%d drift(s) found", len(ans.Drift))
	}
	return ans, nil
}

// ciWorkflows are the files the graph reads.
var ciWorkflows = append(slices.Clone(cirun.PRWorkflows), cirun.ReleaseWorkflow)

// maxCIWorkflows bounds the workflow files one graph reads.
const maxCIWorkflows = 32

// ReadWorkflows reads the checkout's PR workflows and release branch cut,
// and the local workflows their jobs call (the B200 pool's planner and batch
// workflows), as the tables read them (one read of each file); a missing
// file is absent from the map.
func ReadWorkflows(tables *policy.Tables) (map[string]*cirun.Workflow, error) {
	out := map[string]*cirun.Workflow{}
	queue := slices.Clone(ciWorkflows)
	seen := map[string]bool{}
	for i := 0; i < len(queue) && len(seen) < maxCIWorkflows; i++ {
		rel := queue[i]
		if seen[rel] {
			continue
		}
		seen[rel] = true
		f, err := tables.Workflow(rel)
		if err != nil {
			return nil, err
		}
		if f.Data == nil {
			continue
		}
		wf, err := cirun.ParseWorkflowDoc(rel, f.Doc, f.Invalid)
		if err != nil {
			return nil, err
		}
		out[rel] = wf
		for _, j := range wf.Jobs {
			if called, ok := strings.CutPrefix(j.Uses, "./"); ok && strings.HasPrefix(called, ".github/workflows/") && !strings.Contains(called, "..") {
				queue = append(queue, called)
			}
		}
	}
	return out, nil
}
