package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/radixark/miles-ci/pipeline"
)

// checkResultsDir checks --results before the run, so a run never ends with
// results it cannot write: DIR is replaced as a whole, so it must be a folder
// (not a symlink, a file or a device) or absent, in a folder that exists.
func checkResultsDir(dir string) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if info, err := os.Stat(parent); err != nil || !info.IsDir() {
		return fmt.Errorf("--results %s: its folder %s does not exist; create it or give another path", dir, parent)
	}
	info, err := os.Lstat(dir)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("--results %s: %w", dir, err)
	case info.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("--results %s is a symlink; miles-ci replaces the results folder as a whole and follows no link, so give the folder itself", dir)
	case !info.IsDir():
		return fmt.Errorf("--results %s is not a folder; give a folder (it is replaced as a whole) or a path that does not exist", dir)
	}
	return nil
}

// writeResults replaces dir with the run's results: each file is written
// as a new regular file in a fresh folder beside it, which then takes dir's
// place, so no file of an earlier run is left and nothing the tests made
// (a symlink, a device) is ever written on the host.
func writeResults(dir string, files []pipeline.ResultFile) error {
	dir = filepath.Clean(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".new-")
	if err != nil {
		return fmt.Errorf("writing the results to %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		// Names are miles-ci's own (a fixed list, artifacts/ checked); the
		// check keeps a bug from writing outside the folder.
		if f.Name == "" || filepath.IsAbs(f.Name) || strings.Contains(f.Name, "..") || strings.Count(f.Name, "/") > 1 {
			return fmt.Errorf("writing the results to %s: %q is not a results file name", dir, f.Name)
		}
		path := filepath.Join(tmp, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("writing the results to %s: %w", dir, err)
		}
		if err := os.WriteFile(path, []byte(f.Data), 0o644); err != nil {
			return fmt.Errorf("writing the results to %s: %w", dir, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("writing the results to %s: %w", dir, err)
	}
	if err := checkResultsDir(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("replacing the results folder %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("replacing the results folder %s: %w", dir, err)
	}
	return nil
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
