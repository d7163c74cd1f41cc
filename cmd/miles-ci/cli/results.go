package cli

import (
	"fmt"
	"os"
	"path/filepath"
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

// writeResults replaces dir with the run's results: each file is written
// as a new regular file in a fresh folder beside it, which then takes dir's
// place, so no file of an earlier run is left and nothing the tests made
// (a symlink, a device) is ever written on the host.
func writeResults(dir, checkout string, files []stagerun.ResultFile) error {
	return writeResultsDepth(dir, checkout, files, 1)
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
