package usecase

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// GateForm reads the checkout's gate (rules §16) from its metric_history
// files: metricgate.ErrNoGate when it has none.
func GateForm(repo string) (metricgate.Form, error) {
	root, err := policy.CheckCheckout(repo)
	if err != nil {
		return metricgate.Form{}, err
	}
	return metricgate.ReadForm(func(rel string) ([]byte, error) {
		data, err := fsinput.ReadFile(filepath.Join(root, filepath.FromSlash(rel)), fsinput.TableFile)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return data, err
	})
}

// GateRequest is `miles-ci gate`: one test file's gate verdict for a
// record, as Miles' evaluate_gate gives it.
type GateRequest struct {
	// Repo is the Miles checkout whose test file and gate code apply.
	Repo string
	// File is the repo-relative test file.
	File string
	// Record is the merged record's text; NoRecord says there is none.
	Record   string
	NoRecord bool
	// Backend and Suite pick the file's registration (the harness's
	// register_*_ci call) where it has several; under the executing-suite
	// form Suite is the stage the run executed on, and required.
	Backend policy.Backend
	Suite   string
	// Baselines is the store's history; nil is a store with none.
	Baselines metricgate.Baselines
}

// Validate checks the request's own form.
func (r GateRequest) Validate() error {
	switch {
	case r.File == "":
		return errors.New("--file: give the repo-relative test file, e.g. tests/e2e/megatron/test_x.py")
	case filepath.IsAbs(r.File) || strings.HasPrefix(filepath.Clean(r.File), ".."):
		return fmt.Errorf("--file %q: give the test file relative to the checkout (--repo), e.g. tests/e2e/megatron/test_x.py", r.File)
	case r.Backend != "" && !slices.Contains(policy.BackendNames(), string(r.Backend)):
		return fmt.Errorf("--backend %q: give %s", r.Backend, strings.Join(policy.BackendNames(), ", "))
	}
	return nil
}

// GateAnswer is a file's verdict and the form it was judged by.
type GateAnswer struct {
	Form    metricgate.Form        `json:"form"`
	Verdict metricgate.FileVerdict `json:"verdict"`
}

// Gate answers `miles-ci gate`: the file's identity from its registration
// (or the executing stage), then its declarations against the record.
func Gate(ctx context.Context, r GateRequest) (GateAnswer, error) {
	if err := r.Validate(); err != nil {
		return GateAnswer{}, err
	}
	form, err := GateForm(r.Repo)
	if err != nil {
		return GateAnswer{}, err
	}
	root, _ := policy.CheckCheckout(r.Repo)
	rel := filepath.ToSlash(filepath.Clean(r.File))
	src, err := fsinput.ReadFile(filepath.Join(root, filepath.FromSlash(rel)), fsinput.TestFile)
	if err != nil {
		return GateAnswer{}, fmt.Errorf("--file: %w", err)
	}
	ans := GateAnswer{Form: form}
	// The declarations are read first, as evaluate_gate reads them: a
	// file they fail in gets no verdict, whatever its registration.
	specs, specErr := metricgate.ParseDeclarations(rel, src, form)
	id, err := gateIdentity(r, form, rel, src, len(specs) > 0 && specErr == nil)
	if err != nil {
		return ans, err
	}
	if specErr != nil {
		ans.Verdict = metricgate.Failed(id, specErr)
		return ans, nil
	}
	ans.Verdict = judge(ctx, form, id, specs, r.Record, r.NoRecord, r.Baselines)
	return ans, nil
}

// judge is evaluate_gate past the declarations: the record read only when
// a declaration needs it.
func judge(ctx context.Context, form metricgate.Form, id metricgate.Identity, specs []metricgate.Spec, record string, none bool, b metricgate.Baselines) metricgate.FileVerdict {
	var rec *metricgate.Record
	var recErr error
	switch {
	case none:
		recErr = errors.New("no merged record of the passing attempt (the harness wrote none, or miles-ci could not read it)")
	case len(specs) > 0:
		var r metricgate.Record
		if r, recErr = metricgate.ParseRecord(record); recErr == nil {
			rec = &r
		}
	}
	return metricgate.Evaluate(ctx, form, id, specs, rec, recErr, b)
}

// gateIdentity is the run series of a file outside a stage run: the
// registration the harness would have handed the gate, picked by --backend
// and (under the declared-suite form) --suite, with the suite the form
// names. A file with no declaration needs none: without --backend and
// --suite it is named alone, as evaluate_gate names it without a registry.
func gateIdentity(r GateRequest, form metricgate.Form, rel string, src []byte, need bool) (metricgate.Identity, error) {
	id := metricgate.Identity{TestPath: rel}
	if form.Suite == metricgate.ExecutingSuite {
		if r.Suite == "" && need {
			return id, fmt.Errorf("--suite: this checkout's gate keys the baseline on the stage the test ran on (evaluate_gate's executing_suite, form %s); give --suite STAGE", form.Name)
		}
		id.Suite = r.Suite
	}
	picking := r.Backend != "" || r.Suite != ""
	if !need && !picking {
		return id, nil
	}
	tables, err := policy.LoadTables(r.Repo)
	if err != nil {
		return id, err
	}
	regs, err := tables.ParseFile(rel, src)
	if err != nil {
		if !need {
			return id, nil
		}
		return id, fmt.Errorf("--file: %w", err)
	}
	var picked []policy.Registration
	for _, reg := range regs {
		if r.Backend != "" && reg.Backend != r.Backend {
			continue
		}
		if form.Suite == metricgate.DeclaredSuite && r.Suite != "" && reg.Suite != r.Suite {
			continue
		}
		picked = append(picked, reg)
	}
	if len(picked) != 1 {
		if !need {
			return id, nil
		}
		what := "no register_*_ci() call"
		if len(picked) > 1 {
			what = fmt.Sprintf("%d register_*_ci() calls", len(picked))
		}
		if picking {
			what += " of --backend/--suite"
		}
		return id, fmt.Errorf("--file %s: %s; the gate's identity needs exactly one (give --backend and --suite to pick the one the run used)", rel, what)
	}
	id.Backend = string(picked[0].Backend)
	if form.Suite == metricgate.DeclaredSuite {
		id.Suite = picked[0].Suite
	}
	return id, nil
}

// GateJudge is what judges a stage run's metric records (rules §16): the
// checkout's own files and the store's history. The zero judge judges
// nothing.
type GateJudge struct {
	// Source reads a repo-relative file of the checkout, nil when absent:
	// its gate's form and the test files' declarations (the checkout the
	// run was planned from, never a file of the container).
	Source func(rel string) ([]byte, error)
	// Baselines is the store's history; nil is none (every coordinate a
	// cold start).
	Baselines metricgate.Baselines
	// Store names the store for the results, without a password ("": none).
	Store string
}

// CheckoutSource reads a checkout folder's files for a GateJudge, each
// bounded as a test file.
func CheckoutSource(repo string) func(rel string) ([]byte, error) {
	return func(rel string) ([]byte, error) {
		data, err := fsinput.ReadFile(filepath.Join(repo, filepath.FromSlash(rel)), fsinput.TestFile)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return data, err
	}
}

// WithGate judges a CUDA stage run's passing files against their metric
// records as Miles' gate would after each pass (rules §16): summary.json's
// gate holds the verdicts, gate/KEY.jsonl each judged record, masked. The
// run's verdict and exit status never change, and nothing here fails the
// run: what cannot be judged says why in the verdicts.
func WithGate(ctx context.Context, res stagerun.Result, req stagerun.Request, g GateJudge, m *report.Masker) stagerun.Result {
	if g.Source == nil || req.Plan == nil || req.Stage.Backend != policy.CUDA {
		return res
	}
	form, err := metricgate.ReadForm(g.Source)
	if errors.Is(err, metricgate.ErrNoGate) {
		return res
	}
	gate := &report.GateSummary{Form: form.Name, Store: g.Store, Files: []report.GateFile{},
		WritesBaseline: err == nil && g.Store != "" && form.WritesBaseline(string(req.Plan.Cadence)), Provenance: metricgate.ProvenanceFromEnv(runEnvLookup(req))}
	files := slices.Clone(res.Files)
	if err != nil {
		gate.Error = "the checkout's gate cannot be read: " + err.Error()
	} else {
		for _, t := range res.Summary.Tests {
			if t.Status != report.Pass {
				continue
			}
			v, text, kept := judgeFile(ctx, form, req, g, t, res.GateRecords)
			f := report.GateFile{FileVerdict: v}
			if kept {
				f.Record = report.RecordFile(metricgate.RecordKey(t.File))
				files = append(files, stagerun.ResultFile{Name: f.Record, Data: m.Mask(text)})
			}
			gate.Files = append(gate.Files, f)
		}
	}
	res.Summary.Gate = gate
	if js, err := encode.JSON(res.Summary); err == nil {
		for i, f := range files {
			if f.Name == stagerun.SummaryFile {
				files[i].Data = m.Mask(string(js))
			}
		}
	}
	res.Files = files
	return res
}

// judgeFile is run_gate_hook's evaluate_gate for one passing file: its
// declarations, the record the wrapper kept of its passing attempt, the
// identity (the file, cuda, the stage it ran on: the harness's registration
// and executing stage agree in a stage run).
func judgeFile(ctx context.Context, form metricgate.Form, req stagerun.Request, g GateJudge, t report.TestResult, kept []report.GateRecord) (metricgate.FileVerdict, string, bool) {
	id := metricgate.Identity{TestPath: t.File, Backend: string(policy.CUDA), Suite: req.Stage.Name}
	attempt := max(t.Attempts, 1)
	var rec *report.GateRecord
	for i := range kept {
		if kept[i].File == t.File && kept[i].Attempt == attempt {
			rec = &kept[i]
		}
	}
	src, err := g.Source(t.File)
	if err == nil && src == nil {
		err = errors.New("the test file is not in the checkout")
	}
	if err != nil {
		return metricgate.Failed(id, fmt.Errorf("reading %s: %w", t.File, err)), "", false
	}
	specs, err := metricgate.ParseDeclarations(t.File, src, form)
	if err != nil {
		return metricgate.Failed(id, err), "", false
	}
	switch {
	case rec == nil:
		return judge(ctx, form, id, specs, "", true, g.Baselines), "", false
	case rec.Record == nil:
		v := judge(ctx, form, id, specs, "", true, g.Baselines)
		if v.Verdict == metricgate.NoVerdict {
			v.Error = fmt.Sprintf("the merged record of attempt %d: %s", attempt, rec.Problem)
		}
		return v, "", false
	}
	return judge(ctx, form, id, specs, *rec.Record, false, g.Baselines), *rec.Record, true
}

// runEnvLookup is the run's GitHub facts as the container's environment
// has them (GITHUB_COMMIT_NAME and the run's own), for the provenance
// Miles' harness reads.
func runEnvLookup(req stagerun.Request) func(string) (string, bool) {
	sha, pr := req.HeadSHA, req.PRNumber
	if sha == "" {
		sha = "local"
	}
	if pr == "" {
		pr = "non-pr"
	}
	vars := map[string]string{"GITHUB_COMMIT_NAME": sha + "_" + pr}
	for _, e := range req.GitHub.Env() {
		vars[e.Name] = e.Value
	}
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// CheckGateDB refuses a run's --gate-db that is the store the container's
// own harness writes to (NEON_DATABASE_URL handed to it, neon): on a
// nightly or weekly run Miles' run_gate_hook stores each file there itself,
// and miles-ci's copy would count every value twice in the next baseline.
func CheckGateDB(db, neon string) error {
	if db != "" && db == neon {
		return errors.New("--gate-db names the store the container's harness writes to (NEON_DATABASE_URL, handed to the run): a nightly or weekly run would store each value twice; give --gate-db another store, or run without NEON_DATABASE_URL")
	}
	return nil
}
