package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/resultsdir"
	"github.com/radixark/miles-ci/stagerun"
)

// checkResultsDir checks --results before the run (resultsdir.Check): a
// run never ends with results it cannot write, and never replaces a folder
// that is not miles-ci's (the checkout, a folder holding it, /, the home
// folder, "." or "..", a non-empty folder without the marker).
func checkResultsDir(dir, checkout string) error {
	home, _ := os.UserHomeDir()
	return resultsdir.Check(dir, checkout, home)
}

// ending is how a command that ends with a results folder (run, file-run,
// ci, a re-run, triage) ends: what it hands to finish, which keeps the one
// order of such an end.
type ending struct {
	// verdict prints the verdict and its table on stdout (text or JSON).
	verdict func()
	// exit is the verdict's exit status: the command's, whatever follows.
	exit int
	// gh and stepSummary: the Markdown appended to --github-step-summary.
	gh          *githubFlags
	stepSummary string
	// record records the runtime history (nil: the command records
	// nothing) and gives the rows to keep in the folder.
	record func() []stagerun.ResultFile
	// recording says whether record writes a history (for the message when
	// the folder cannot be written).
	recording bool
	// dir is the results folder, replaced as a whole by files, whose names
	// are at most depth folders deep ("" for none, where it is optional:
	// ci --what-if); checkout is what it must not be.
	dir, checkout string
	files         []stagerun.ResultFile
	depth         int
	// written prints what names the folder, once it is written ("results:
	// DIR", each failed shard's run.log in it); last what ends the command
	// either way (where the engine's log is).
	written, last func()
	// mask masks the secret values in what finish prints.
	mask func(string) string
}

// finish ends a command that ends with a results folder, in the one order
// (issue 38): the verdict and its table are printed first, then the step
// summary is appended and the runtime history recorded, and the folder is
// written last, with the history's rows in it. Nothing after the verdict
// changes it: a step summary, a store or a folder that cannot be written (a
// full disk) is an error that says what was kept, and the exit status stays
// the verdict's.
func finish(env Env, e ending) int {
	mask := e.mask
	if mask == nil {
		mask = func(s string) string { return s }
	}
	stands := fmt.Sprintf("; the verdict above stands (exit %d)", e.exit)
	e.verdict()
	if e.gh != nil {
		if err := e.gh.writeSummary(env, e.stepSummary); err != nil {
			annotate(env, "error", mask(err.Error())+stands)
		}
	}
	files := e.files
	if e.record != nil {
		files = append(slices.Clone(files), e.record()...)
	}
	if e.dir == "" { // a command whose folder is optional, given none
		if e.last != nil {
			e.last()
		}
		return e.exit
	}
	if err := writeResultsDepth(e.dir, e.checkout, files, e.depth); err != nil {
		recorded := ""
		if e.recording {
			recorded = "; the runtime history is recorded without it"
		}
		annotate(env, "error", mask(err.Error())+stands+recorded)
	} else if e.written != nil {
		e.written()
	}
	if e.last != nil {
		e.last()
	}
	return e.exit
}

// writeResultFile writes one file of the results; tests make it fail as a
// full disk does.
var writeResultFile = fsinput.WriteSynced

// writeResultsDepth is writeResults for names of up to depth folders (a ci
// run's STAGE/2-of-4/artifacts/NAME). Its error says what was kept where:
// dir as it was when the new folder could not be written, the new folder
// beside it when dir could not be replaced.
func writeResultsDepth(dir, checkout string, files []stagerun.ResultFile, depth int) error {
	dir = filepath.Clean(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".new-")
	if err != nil {
		return fmt.Errorf("writing the results to %s: %w; %s is left as it was and this run's results are not kept", dir, err, dir)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	notWritten := func(err error) error {
		return fmt.Errorf("writing the results to %s: %w; %s is left as it was and this run's results are not kept", dir, err, dir)
	}
	for _, f := range files {
		// Names are miles-ci's own (a fixed list, artifacts/ checked); the
		// check keeps a bug from writing outside the folder.
		if f.Name == "" || filepath.IsAbs(f.Name) || strings.Contains(f.Name, "..") || strings.Count(f.Name, "/") > depth {
			return fmt.Errorf("writing the results to %s: %q is not a results file name", dir, f.Name)
		}
		path := filepath.Join(tmp, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return notWritten(err)
		}
		if err := writeResultFile(path, []byte(f.Data), 0o644); err != nil {
			return notWritten(err)
		}
	}
	// The marker says the folder is miles-ci's: the next run may replace it.
	if err := writeResultFile(filepath.Join(tmp, resultsdir.Marker), []byte(resultsdir.MarkerText), 0o644); err != nil {
		return notWritten(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return notWritten(err)
	}
	if err := checkResultsDir(dir, checkout); err != nil {
		return err
	}
	keep = true
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("replacing the results folder %s: %w; this run's results are kept in %s", dir, err, tmp)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("replacing the results folder %s: %w; this run's results are kept in %s", dir, err, tmp)
	}
	return nil
}

// madeFolders are the folders one invocation made for its results, in
// the order made (nil: none are kept track of).
type madeFolders struct{ dirs []string }

func (m *madeFolders) add(dir string) {
	if m != nil {
		m.dirs = append(m.dirs, dir)
	}
}

// removeEmpty removes the folders made that are still empty, the last made
// first: a run that ended before its results were written (the engine
// could not be reached, a refused flag) leaves no empty results folder.
// os.Remove removes no folder that holds anything.
func (m *madeFolders) removeEmpty() {
	for i := len(m.dirs) - 1; i >= 0; i-- {
		os.Remove(m.dirs[i])
	}
}

// lockResults holds --results against a second run for the whole of this
// one (resultsdir.Lock).
func lockResults(dir string) (func(), error) {
	if dir == "" {
		return func() {}, nil
	}
	return resultsdir.Lock(dir)
}

// checkSummary checks --github-step-summary (or $GITHUB_STEP_SUMMARY)
// before a run: absent, or a regular file, in a folder that exists.
func (g *githubFlags) checkSummary(env Env) error {
	path := *g.summary
	if !g.given("github-step-summary") {
		path = env.Getenv("GITHUB_STEP_SUMMARY")
	}
	if path == "" {
		return nil
	}
	if info, err := os.Stat(filepath.Dir(path)); err != nil || !info.IsDir() {
		return fmt.Errorf("--github-step-summary %s: its folder does not exist; give the step's $GITHUB_STEP_SUMMARY file", path)
	}
	info, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("--github-step-summary %s: %w", path, err)
	case !info.Mode().IsRegular():
		return fmt.Errorf("--github-step-summary %s is not a regular file; give the step's $GITHUB_STEP_SUMMARY file", path)
	}
	return nil
}
