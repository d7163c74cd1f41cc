package usecase

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/nearest"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/report/htmlpage"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/triage"
)

// TriageRequest is `miles-ci triage` and the module's triage: each file run
// Attempts times at the head and, when the head fails every time, at the
// merge base, through the single-file run path (File), until its verdict is
// certain (triage.Decide).
type TriageRequest struct {
	// Head are the head's run inputs as file-run takes them (Repo is the
	// head checkout; File is set per file).
	Head Inputs
	// BaseRepo is the merge base's checkout, a folder (BaseCheckout), and
	// HeadCommit and BaseCommit name the two sides.
	BaseRepo               string
	HeadCommit, BaseCommit string
	// Files are the repo-relative test files to triage.
	Files []string
	// Attempts is K, the attempts per side (default 3).
	Attempts int
	// Budget bounds the whole triage's time (0: none).
	Budget time.Duration
	// Session names this triage: its attempts' run ids, refs and nonces.
	Session string
	// Out is where the front end writes the attempts' results (the run.log
	// paths name it; "" leaves them relative).
	Out string
	// Runner runs the attempts.
	Runner TriageRunner
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Notify is told each attempt as it ends (nil: nobody).
	Notify func(file string, a triage.Attempt)
}

// FromFork says whether the head is a pull request from a fork (given, or
// the PR read): its attempts are handed no secrets (stagerun.HandedSecrets).
func (r TriageRequest) FromFork() bool { return r.Head.Fork || (r.Head.PR != nil && r.Head.PR.Fork) }

// TriageRunner runs a triage's attempts on an engine.
type TriageRunner interface {
	// Resolve resolves the moving dependency refs of a request to commits
	// (stagerun.Resolve), once for the whole triage.
	Resolve(ctx context.Context, req stagerun.Request, nonce string) (stagerun.Request, error)
	// Run runs a single-file request on the checkout at repo (the head's
	// or the base's), as file-run does.
	Run(ctx context.Context, repo string, req stagerun.Request, nonce string) (stagerun.Result, error)
}

// MaxTriageAttempts bounds --attempts.
const MaxTriageAttempts = 10

// Validate checks the request before anything runs.
func (r TriageRequest) Validate() error {
	switch {
	case len(r.Files) == 0:
		return errors.New("triage: no test file; give --file PATH, or --results DIR of a run with failed files")
	case r.Attempts < 0 || r.Attempts > MaxTriageAttempts:
		return fmt.Errorf("triage: --attempts %d is outside 1..%d", r.Attempts, MaxTriageAttempts)
	case r.Budget < 0:
		return errors.New("triage: --budget must be a positive duration, e.g. 2h")
	case r.BaseRepo == "":
		return errors.New("triage: no merge base checkout; give --base REF or --pr N")
	case !sessionName.MatchString(r.Session):
		return fmt.Errorf("triage: session %q is not a name of letters, digits, '-', '_' or '.'", r.Session)
	}
	return nil
}

var sessionName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// CheckTriageFiles checks, before anything runs or is written, that each
// file given to triage (--file) is a file of the head checkout: a mistyped
// one is an error naming the nearest test file of the checkout, not an
// inconclusive verdict with a results folder beside it (issue 40).
func CheckTriageFiles(head string, files []string) error {
	var known []string
	for _, f := range files {
		if info, err := os.Lstat(filepath.Join(head, filepath.FromSlash(f))); err == nil && info.Mode().IsRegular() {
			continue
		}
		if known == nil {
			if reg, err := policy.LoadRegistry(head); err == nil {
				for _, g := range reg.Registrations {
					if !slices.Contains(known, g.File) {
						known = append(known, g.File)
					}
				}
			}
		}
		msg := fmt.Sprintf("--file %s does not exist in the head checkout, %s", printable.Line(f), fsinput.FolderName(head))
		if n := nearest.Name(f, known); n != "" {
			msg += "; did you mean " + n + "?"
		}
		return errors.New(msg + "; give the repo-relative path of a test file, e.g. tests/fast/test_x.py")
	}
	return nil
}

// CheckTriageHead checks, before anything runs or is written, what the head
// side of every attempt would be refused for: the devices (--gpus,
// --visible-devices) and, for each file given (--file), its single-file run
// at the head (a file that is not a registered test, or one the head
// disables). Either would make every attempt inconclusive after the engine
// started and a results folder was written; it is an error of the input.
func CheckTriageHead(in Inputs, files []string) error {
	if _, err := WithDevices(stagerun.Request{}, in.GPUs, in.VisibleDevices); err != nil {
		return err
	}
	for _, f := range files {
		in.File = f
		if _, err := File(in); err != nil {
			return fmt.Errorf("--file %s: the head cannot run it: %w", printable.Line(f), err)
		}
	}
	return nil
}

// TriageAttempt is one attempt with what the front end writes and records.
type TriageAttempt struct {
	triage.Attempt
	// Commit is the side's commit.
	Commit string `json:"commit"`
	// Dir is the attempt's results folder, relative to Out.
	Dir string `json:"dir"`
	// Summary and Files are the attempt's results (nil and none when it
	// could not run).
	Summary *report.Summary       `json:"-"`
	Files   []stagerun.ResultFile `json:"-"`
}

// TriageFile is one file's verdict.
type TriageFile struct {
	File    string `json:"file"`
	Stage   string `json:"stage,omitempty"`
	Backend string `json:"backend,omitempty"`
	triage.Decision
	Attempts []TriageAttempt `json:"attempts"`
}

// TriageAnswer is every file's verdict.
type TriageAnswer struct {
	Session string       `json:"session"`
	Head    string       `json:"head_commit"`
	Base    string       `json:"base_commit"`
	Files   []TriageFile `json:"files"`
}

// ExitStatus is the triage's verdict as an exit status: 1 when a file is a
// regression (the change broke it), 125 when one is inconclusive, else 0.
func (a TriageAnswer) ExitStatus() int {
	code := 0
	for _, f := range a.Files {
		switch f.Verdict {
		case triage.Regression:
			return 1
		case triage.Inconclusive:
			code = report.ExitCannotRun
		}
	}
	return code
}

// Triage runs the request's files in turn.
func Triage(ctx context.Context, r TriageRequest) (TriageAnswer, error) {
	if err := r.Validate(); err != nil {
		return TriageAnswer{}, err
	}
	if r.Attempts == 0 {
		r.Attempts = 3
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	t := &triageRun{r: r, start: r.Now()}
	ans := TriageAnswer{Session: r.Session, Head: r.HeadCommit, Base: r.BaseCommit}
	for _, f := range r.Files {
		ans.Files = append(ans.Files, t.file(ctx, f))
	}
	return ans, nil
}

type triageRun struct {
	r     TriageRequest
	start time.Time
}

// file triages one file: plan both sides, resolve the refs once, then run
// the side the verdict rule asks for until it is final.
func (t *triageRun) file(ctx context.Context, file string) TriageFile {
	r := t.r
	out := TriageFile{File: file, Attempts: []TriageAttempt{}}
	stop := func(why string) TriageFile {
		out.Decision = triage.Stop(triage.Decide(attemptsOf(out.Attempts), r.Attempts), why)
		return out
	}
	in := r.Head
	in.File = file
	head, err := File(in)
	if err != nil {
		return stop("the head cannot run it: " + err.Error())
	}
	out.Stage, out.Backend = head.Stage.Name, string(head.Stage.Backend)
	nonce := r.Session + "/" + file
	if head, err = r.Runner.Resolve(ctx, head, nonce+"/resolve"); err != nil {
		return stop("resolving the dependency refs: " + err.Error())
	}
	in.Repo = r.BaseRepo
	base, baseErr := File(in)
	if baseErr == nil {
		// The same refs and image as the head's, so only the change
		// differs; the file's own registration and est_time are the base's.
		if base.Deps.SGLang == head.Deps.SGLang && base.Deps.Megatron == head.Deps.Megatron {
			base.Commits = head.Commits
		}
		if base.Stage.Backend == head.Stage.Backend {
			base.Image = head.Image
		}
	}
	limit := time.Duration(stagerun.StageTimeoutMinutes(head.Stage.Backend)) * time.Minute
	var used time.Duration
	for {
		d := triage.Decide(attemptsOf(out.Attempts), r.Attempts)
		if d.Final {
			out.Decision = d
			return out
		}
		left := limit - used
		why := fmt.Sprintf("its attempts used the %s stage's %d-minute timeout", out.Backend, int(limit.Minutes()))
		if r.Budget > 0 && r.Budget-r.Now().Sub(t.start) < left {
			left = r.Budget - r.Now().Sub(t.start)
			why = fmt.Sprintf("the --budget of %s ran out", r.Budget)
		}
		if left <= 0 {
			return stop(why)
		}
		if ctx.Err() != nil {
			return stop("the triage was interrupted")
		}
		n := 1
		for _, a := range out.Attempts {
			if a.Side == d.Next {
				n++
			}
		}
		a := TriageAttempt{Attempt: triage.Attempt{Side: d.Next, N: n}, Commit: r.HeadCommit, Dir: fmt.Sprintf("%s/%s-%d", slug(file), d.Next, n)}
		req, repo := head, r.Head.Repo
		if d.Next == triage.Base {
			req, repo, a.Commit = base, r.BaseRepo, r.BaseCommit
			if baseErr != nil {
				a.Outcome, a.Reason = triage.CannotRun, "the merge base cannot run it: "+baseErr.Error()
				out.Attempts = append(out.Attempts, a)
				t.notify(file, a.Attempt)
				continue
			}
		}
		// The attempt's own run id and number, as a GitHub re-run has
		// them: a test that seeds from GITHUB_RUN_ATTEMPT gets a fixed
		// seed per attempt.
		req.GitHub.RunID = strconv.FormatInt(triage.RunID(r.Session, d.Next), 10)
		req.GitHub.RunAttempt = strconv.Itoa(n)
		actx, cancel := context.WithTimeout(ctx, left)
		began := r.Now()
		res, err := r.Runner.Run(actx, repo, req, fmt.Sprintf("%s/%s/%d", nonce, d.Next, n))
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		elapsed := r.Now().Sub(began)
		used += elapsed
		a.DurationS = elapsed.Seconds()
		switch {
		case ctx.Err() != nil:
			return stop("the triage was interrupted")
		case timedOut:
			return stop(why)
		case err != nil:
			a.Outcome, a.Reason = triage.CannotRun, err.Error()
		case res.Summary.Verdict == report.Inconsistent:
			a.Outcome, a.Reason = triage.CannotRun, "its results are inconsistent, so its outcome is not trusted"
		case res.Summary.Passed:
			a.Outcome = triage.Pass
		default:
			a.Outcome, a.Reason = triage.Fail, FirstFailure(res.Summary)
		}
		if err == nil {
			sum := res.Summary
			a.Summary, a.Files = &sum, res.Files
			if slices.ContainsFunc(res.Files, func(f stagerun.ResultFile) bool { return f.Name == "run.log" }) {
				a.Log = filepath.Join(r.Out, filepath.FromSlash(a.Dir), "run.log")
			}
		}
		out.Attempts = append(out.Attempts, a)
		t.notify(file, a.Attempt)
	}
}

func (t *triageRun) notify(file string, a triage.Attempt) {
	if t.r.Notify != nil {
		t.r.Notify(file, a)
	}
}

func attemptsOf(as []TriageAttempt) []triage.Attempt {
	out := make([]triage.Attempt, len(as))
	for i, a := range as {
		out[i] = a.Attempt
	}
	return out
}

// slug is a test file's folder name in the results: its path with / as __.
func slug(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", "__")
}

// ResultFiles are the triage's results: each attempt's folder
// (FILE_SLUG/SIDE-N/, as file-run --results writes it), triage.json,
// step-summary.md (both masked by the caller) and report.html, the
// verdict table masked with m.
func (a TriageAnswer) ResultFiles(markdown string, json []byte, m *report.Masker) ([]stagerun.ResultFile, error) {
	var out []stagerun.ResultFile
	page := htmlpage.Triage{Session: a.Session, Head: a.Head, Base: a.Base, Mask: m.Mask}
	for _, f := range a.Files {
		pf := htmlpage.TriageFile{File: f.File, Decision: f.Decision}
		for _, at := range f.Attempts {
			for _, rf := range at.Files {
				out = append(out, stagerun.ResultFile{Name: at.Dir + "/" + rf.Name, Data: rf.Data})
			}
			pf.Attempts = append(pf.Attempts, htmlpage.TriageAttempt{Attempt: at.Attempt, Dir: at.Dir})
		}
		page.Files = append(page.Files, pf)
	}
	html, err := htmlpage.RenderTriage(page)
	if err != nil {
		return nil, err
	}
	return append(out, stagerun.ResultFile{Name: "triage.json", Data: string(json)}, stagerun.ResultFile{Name: "step-summary.md", Data: markdown},
		stagerun.ResultFile{Name: htmlpage.FileName, Data: string(html)}), nil
}

// FailedFiles are the failed test files of a results folder, in order, as
// the one reader of results folders finds them (ResultsFolder.FailedFiles):
// a miles-ci ci folder's failed shards' files (STAGE/2-of-4/, STAGE/, an
// older STAGE/ID/), a run or file-run folder's, a triage's head attempts'.
func FailedFiles(dir string) ([]string, error) {
	f, err := ReadResultsFolder(dir)
	if err != nil {
		return nil, fmt.Errorf("--results: %w", err)
	}
	for _, s := range f.Shards {
		if s.Summary == nil && s.Job.State == cirun.Failed {
			return nil, fmt.Errorf("--results %s: %s failed, but %s", dir, s.Job.Title(), s.Unproven)
		}
	}
	files := f.FailedFiles()
	if len(files) == 0 {
		return nil, fmt.Errorf("--results %s has no failed test file to triage", dir)
	}
	return files, nil
}

// Text is the verdict table as a person reads it: one line per file, then
// each attempt with its outcome, duration and run.log.
func (a TriageAnswer) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "triage %s: head %s, merge base %s\n", a.Session, short(a.Head), short(a.Base))
	for _, f := range a.Files {
		// A file's name comes from the checkout or a results folder, a
		// reason from what the test printed: each shows on its one line.
		fmt.Fprintf(&b, "%s  %s  %s: %s\n", printable.Line(f.File), f.Verdict, f.Counts, printable.Line(f.Reason))
		for _, at := range f.Attempts {
			line := fmt.Sprintf("    %s #%d  %-10s %6.1fs  %s", at.Side, at.N, at.Outcome, at.DurationS, printable.Line(at.Log))
			if at.Reason != "" {
				line += "  (" + printable.Line(at.Reason) + ")"
			}
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	return b.String()
}

// Markdown is the verdict table for the step summary.
func (a TriageAnswer) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## miles-ci triage\n\nhead `%s`, merge base `%s`\n\n| file | verdict | head pass / fail | base pass / fail | why | attempts |\n|---|---|---|---|---|---|\n", short(a.Head), short(a.Base))
	cell := strings.NewReplacer("|", "\\|", "\n", " ", "`", "'").Replace
	for _, f := range a.Files {
		var tries []string
		for _, at := range f.Attempts {
			tries = append(tries, fmt.Sprintf("%s #%d %s %.0fs", at.Side, at.N, at.Outcome, at.DurationS))
		}
		fmt.Fprintf(&b, "| `%s` | **%s** | %d / %d | %d / %d | %s | %s |\n", cell(f.File), f.Verdict, f.Counts.HeadPass, f.Counts.HeadFail,
			f.Counts.BasePass, f.Counts.BaseFail, cell(f.Reason), cell(strings.Join(tries, "; ")))
	}
	return b.String()
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	if commit == "" {
		return "(unknown)"
	}
	return commit
}
