package ci

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

// rerunOptions checks that the run is the same run as prev (commit, event,
// trigger facts, planner) and gives the scheduler what it keeps, and this
// attempt's number. It keeps only what it can check: a shard whose own
// folder proves it passed (usecase.ResultsFolder.Proven: its summary.json
// the one the run record bound by digest, of that shard, passed). Every
// other unit runs again: a shard that does not prove its pass (named in
// rerunMessages), and the resolvers, miles-ci's own use cases, which give
// on the same commit and facts what they gave (their outputs in the record
// are not taken on trust), and a PR image the run built, which lives in
// the engine session that built it (the engine's cache makes it a lookup).
func rerunOptions(prev *usecase.PreviousRun, facts *cirun.RunFacts) (map[string]cirun.Previous, int, error) {
	was := prev.Report.Run
	if facts.Commit == "" || was.Commit == "" {
		return nil, 0, fmt.Errorf("%w: --rerun-failed %s: no commit to compare (this checkout's %q, the run's %q): a re-run repeats one commit, so it needs a git checkout (or --head-sha)", usecase.ErrNotSameRun, prev.Dir, facts.Commit, was.Commit)
	}
	facts.RunID = was.RunID
	if d := was.Differences(*facts); len(d) > 0 {
		return nil, 0, fmt.Errorf("%w: --rerun-failed %s differs from this run, so nothing of it can be kept: %s; give the same checkout and facts, or run miles-ci ci without --rerun-failed for a new run", usecase.ErrNotSameRun, prev.Dir, strings.Join(d, "; "))
	}
	kept := prev.Report.Kept(func(j cirun.JobReport) any {
		if j.Command == "" && j.Tests == nil {
			return nil
		}
		return keptShard{command: j.Command, tests: j.Tests}
	})
	for unit := range kept {
		if _, ok := prev.Proven(unit); !ok {
			delete(kept, unit)
		}
	}
	return kept, max(prev.Report.Attempt, 1) + 1, nil
}

// rerunMessages warn of each shard the earlier attempt passed whose folder
// does not prove it: this attempt runs it again.
func rerunMessages(prev *usecase.PreviousRun) []usecase.Message {
	var out []usecase.Message
	for _, l := range prev.UnprovenLines() {
		out = append(out, usecase.Warning(fmt.Sprintf("--rerun-failed %s: %s; it runs again", prev.Dir, l)))
	}
	return out
}

// ranAgain are the shards a re-run ran (or, dry, would run) again: not
// kept, and not skipped or left out.
func ranAgain(rep *cirun.Report) []string {
	var out []string
	for _, j := range rep.Jobs {
		switch {
		case j.ResultsDir() == "" || j.Reused:
		case j.State == cirun.WouldRun, j.State == cirun.Passed, j.State == cirun.Failed, j.State == cirun.NotRun, j.State == cirun.Cancelled:
			out = append(out, j.Title())
		}
	}
	return out
}

// recordDoesNotHold warns that the earlier attempt's record says nothing
// is left to run, but the graph, evaluated on the same commit and facts
// with what the record keeps, runs these jobs: a job recorded as skipped
// or left out whose if: holds (an edited record, or one of another
// --only/--skip). A re-run runs them.
func recordDoesNotHold(prev *usecase.PreviousRun, would []string) usecase.Message {
	return usecase.Warning(fmt.Sprintf("--rerun-failed %s: its record says no job failed, but the graph runs %s on this commit and these facts (the record says skipped or left out); they run again",
		prev.Dir, strings.Join(would, ", ")))
}

// nothingToRerun is the answer when every job of the earlier attempt passed
// or was skipped as CI skips it, and a dry evaluation of the graph on what
// it keeps runs nothing: the run stands, as it was.
func nothingToRerun(prev *usecase.PreviousRun, ev cirun.Event) CIAnswer {
	rep := prev.Report
	rep.Event = ev
	return CIAnswer{Mode: Kept, Report: rep, NothingToRerun: true, Messages: []usecase.Message{usecase.Notice(fmt.Sprintf(
		"--rerun-failed %s: nothing to re-run: no job of attempt %d failed, was cancelled or could not run; its verdict stands (exit %d)",
		prev.Dir, max(rep.Attempt, 1), rep.ExitStatus()))}}
}

// keptShard is a reused shard's Detail: the command and tests it ran.
type keptShard struct {
	command string
	tests   []string
}

func (k keptShard) RunCommand() string  { return k.command }
func (k keptShard) TestFiles() []string { return k.tests }

// Lines are the command and the tests, for the graph's text.
func (k keptShard) Lines() []string {
	if k.command == "" {
		return k.tests
	}
	return append([]string{"$ " + k.command}, k.tests...)
}

// Bounds of a kept shard's results folder, read back byte for byte.
const (
	maxKeptFile  = 64 << 20
	maxKeptTotal = 512 << 20
	maxKeptFiles = 4096
)

// keep adds the results of the shards a re-run reused, read from the
// earlier run's folder (the folder the one reader proved, the older
// STAGE/ID included), so the new folder holds them byte for byte, in the
// layout's folder.
func (e *EngineShards) keep(prev *usecase.PreviousRun, rep *cirun.Report) error {
	total := int64(0)
	for i, j := range rep.Jobs {
		if !j.Reused || j.Stage == "" || (j.Kind != cirun.KindStage && j.Kind != cirun.KindPoolRun) {
			continue
		}
		rec, ok := prev.Proven(j.Unit())
		if !ok {
			return fmt.Errorf("--rerun-failed: %s was kept but its folder does not prove it passed", j.Title())
		}
		files, err := readKept(filepath.Join(prev.Dir, filepath.FromSlash(rec.Dir)), &total)
		if err != nil {
			return fmt.Errorf("--rerun-failed: keeping %s: %w", rec.Dir, err)
		}
		// The summary.json copied must be the one that was checked.
		for _, f := range files {
			if sum := sha256.Sum256([]byte(f.Data)); f.Name == stagerun.SummaryFile && hex.EncodeToString(sum[:]) != rec.Job.SummarySHA256 {
				return fmt.Errorf("--rerun-failed: %s/summary.json changed during the re-run; run it again", rec.Dir)
			}
		}
		dir := j.ResultsDir()
		rep.Jobs[i].Results = dir
		e.mu.Lock()
		e.done = append(e.done, ciShard{dir: dir, files: files, summary: *rec.Summary, kept: true})
		e.mu.Unlock()
	}
	return nil
}

// readKept reads every file below dir (regular files only, bounded), by
// its slash path relative to dir.
func readKept(dir string, total *int64) ([]stagerun.ResultFile, error) {
	var out []stagerun.ResultFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file; a results folder miles-ci wrote holds only files and folders", p)
		}
		if len(out) >= maxKeptFiles {
			return fmt.Errorf("more than %d files below %s", maxKeptFiles, dir)
		}
		data, err := fsinput.ReadFile(p, fsinput.Kind{Name: "a kept result file", Max: maxKeptFile})
		if err != nil {
			return err
		}
		if *total += int64(len(data)); *total > maxKeptTotal {
			return fmt.Errorf("the kept results are over %d bytes", maxKeptTotal)
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, stagerun.ResultFile{Name: path.Clean(filepath.ToSlash(rel)), Data: string(data)})
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the earlier run's folder has no %s; give the whole results folder miles-ci ci wrote", dir)
	}
	return out, err
}
