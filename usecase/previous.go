package usecase

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// Layout is the kind of results folder ReadResultsFolder found: every
// folder a command writes is one of these, and this reader is the only one
// that knows where their files are.
type Layout string

const (
	// LayoutCI is miles-ci ci's (and the module's ci ... run results): its
	// summary.json is the run record (every job), and each shard that ran
	// has a folder of its own, as `run` writes one: STAGE/2-of-4/ for shard
	// 2 of 4, STAGE/ for an unsharded stage, SUITE/N/ for the Nth file of a
	// B200 pool plan (0 first); a run of an older miles-ci kept a shard in
	// STAGE/ID/, the 0-based id.
	LayoutCI Layout = "ci"
	// LayoutRun is run's and file-run's: the one shard's summary.json at
	// the top.
	LayoutRun Layout = "run"
	// LayoutTriage is triage's: triage.json at the top and FILE/SIDE-N/
	// for each attempt (head-1, base-2, ...), each as file-run writes one.
	LayoutTriage Layout = "triage"
)

// ResultsFolder is a results folder read back by the one reader every
// command shares (--rerun-failed, report, triage --results): what it is,
// and each shard's record in it, checked. It trusts only what it can check:
// a shard of a ci run counts as passed only when its own folder proves it
// (ShardRecord.Unproven).
type ResultsFolder struct {
	// Dir is the folder it was read from.
	Dir    string
	Layout Layout
	// Run is the run record, a ci run's summary.json (LayoutCI; nil
	// otherwise).
	Run *cirun.Report
	// Shards are the shards' records: each stage shard and pool file the
	// run record says ran (LayoutCI, in its order), the one run's
	// (LayoutRun), each attempt (LayoutTriage, in folder order).
	Shards []ShardRecord
}

// ShardRecord is one shard's folder in a results folder.
type ShardRecord struct {
	// Job is the shard's entry in the run record (LayoutCI).
	Job cirun.JobReport
	// Dir is its folder under the results folder, slash-separated ("."
	// for LayoutRun).
	Dir string
	// Summary is its summary.json, read and checked (report.ParseResults);
	// nil when it has none that reads.
	Summary *report.Summary
	// Unproven says why its folder does not prove what the run record says
	// of it (LayoutCI): the folder or its summary.json is missing, is a
	// link, does not read, or is not the one the run recorded (its
	// digest), or it names another shard or outcome. "" when it proves it.
	Unproven string
}

// ErrNotResults marks a folder the one reader refuses: it is no results
// folder miles-ci wrote (a folder without shard records, a summary.json
// that is not miles-ci's).
var ErrNotResults = errors.New("not a results folder miles-ci wrote")

// The files the reader reads: bounded, never through a link.
var (
	runRecordFile = fsinput.Kind{Name: "a summary.json", Max: cirun.MaxReportSize, NoLink: true}
	triageFile    = "triage.json"
	// attemptDir is a triage attempt's folder, FILE/SIDE-N.
	attemptDir = lazyre.New(`^[^/]+/(head|base)-[0-9]+$`)
)

// ReadResultsFolder reads a results folder as the command that wrote it
// laid it out (Layout), checking each shard's record: a ci run's shard
// whose folder does not prove what the run record says of it is named in
// its ShardRecord.Unproven, and a ci folder whose record says shards ran but
// which holds none of their folders is refused (ErrNotResults).
func ReadResultsFolder(dir string) (*ResultsFolder, error) {
	name := filepath.Join(dir, stagerun.SummaryFile)
	data, err := fsinput.ReadFile(name, runRecordFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, terr := os.Lstat(filepath.Join(dir, triageFile)); terr == nil {
			return readTriageFolder(dir)
		}
		if _, derr := os.Stat(dir); derr != nil {
			return nil, fmt.Errorf("%s does not exist; give the results folder a run wrote", dir)
		}
		return nil, fmt.Errorf("%w: %s holds neither summary.json (ci, run, file-run) nor triage.json (triage); give the results folder a run wrote", ErrNotResults, dir)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrNotResults, err)
	}
	var probe struct {
		Jobs json.RawMessage `json:"jobs"`
	}
	if json.Unmarshal(data, &probe) == nil && probe.Jobs != nil {
		return readCIFolder(dir, name, data)
	}
	s, err := report.ParseResults(name, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotResults, err)
	}
	return &ResultsFolder{Dir: dir, Layout: LayoutRun, Shards: []ShardRecord{{Dir: ".", Summary: s}}}, nil
}

// readCIFolder reads a ci run's record and checks each shard it says ran.
func readCIFolder(dir, name string, data []byte) (*ResultsFolder, error) {
	rep, err := cirun.ParseReport(name, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotResults, err)
	}
	f := &ResultsFolder{Dir: dir, Layout: LayoutCI, Run: rep}
	found := 0
	for _, j := range rep.Jobs {
		if j.ResultsDir() == "" || (j.State != cirun.Passed && j.State != cirun.Failed) {
			continue // it ran no container, or never finished one
		}
		rec := checkShard(dir, j)
		if rec.Summary != nil {
			found++
		}
		f.Shards = append(f.Shards, rec)
	}
	if len(f.Shards) > 0 && found == 0 {
		return nil, fmt.Errorf("%w: %s's summary.json says %d shard(s) ran, but the folder holds none of their records (%s/summary.json, ...): a folder miles-ci ci writes holds each shard's own; give the whole folder, or run miles-ci ci again without it",
			ErrNotResults, dir, len(f.Shards), f.Shards[0].Dir)
	}
	return f, nil
}

// checkShard reads a shard's folder and says whether it proves what the
// run record says of the shard: its folder (the layout's, else the older
// STAGE/ID) holds a regular summary.json whose digest the run recorded,
// which names the shard's stage and shard, and whose verdict is the job's.
func checkShard(dir string, j cirun.JobReport) ShardRecord {
	rec := ShardRecord{Job: j, Dir: j.ResultsDir()}
	if legacy := legacyResultsDir(j); !isDir(filepath.Join(dir, filepath.FromSlash(rec.Dir))) && isDir(filepath.Join(dir, filepath.FromSlash(legacy))) {
		rec.Dir = legacy
	}
	shardDir := filepath.Join(dir, filepath.FromSlash(rec.Dir))
	if info, err := os.Lstat(shardDir); err != nil {
		rec.Unproven = "its folder " + rec.Dir + " is missing"
		return rec
	} else if !info.IsDir() {
		rec.Unproven = "its folder " + rec.Dir + " is not a folder (a link, a file)"
		return rec
	}
	s, data, err := report.ReadResultsData(shardDir)
	if err != nil {
		rec.Unproven = "its summary.json does not read: " + strings.TrimPrefix(err.Error(), "--results: ")
		return rec
	}
	rec.Summary = s
	sum := sha256.Sum256(data)
	switch {
	case j.SummarySHA256 == "":
		rec.Unproven = "the run record holds no digest of its summary.json (a folder of an older miles-ci, or an edited record)"
	case hex.EncodeToString(sum[:]) != j.SummarySHA256:
		rec.Unproven = "its summary.json is not the one the run recorded (its sha256 differs): it was changed after the run"
	case s.Suite != j.Stage:
		rec.Unproven = fmt.Sprintf("its summary.json is of suite %s, not %s", s.Suite, j.Stage)
	case !sameShard(s, j):
		rec.Unproven = "its summary.json is of another shard"
	case s.Passed != (j.State == cirun.Passed):
		rec.Unproven = fmt.Sprintf("its summary.json says %s where the run record says %s", s.Verdict, j.State)
	}
	return rec
}

// sameShard reports a summary of the job's shard (or pool file).
func sameShard(s *report.Summary, j cirun.JobReport) bool {
	if j.Batch > 0 {
		return s.File == j.File
	}
	if p := j.Partition(); p != nil {
		return s.Shard != nil && s.Shard.ID == p.ID && s.Shard.Size == p.Size
	}
	return s.Shard == nil || s.Shard.Size <= 1
}

// legacyResultsDir is where a run before the one shard number kept a
// shard: STAGE/ID with the 0-based id (0 for an unsharded stage).
func legacyResultsDir(j cirun.JobReport) string {
	shard := 0
	if j.Shard != nil {
		shard = *j.Shard
	}
	return j.Stage + "/" + strconv.Itoa(shard)
}

func isDir(p string) bool {
	info, err := os.Lstat(p)
	return err == nil && info.IsDir()
}

// readTriageFolder reads a triage's attempts: FILE/SIDE-N/ folders.
func readTriageFolder(dir string) (*ResultsFolder, error) {
	f := &ResultsFolder{Dir: dir, Layout: LayoutTriage}
	files, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotResults, err)
	}
	for _, file := range files {
		if !file.IsDir() {
			continue
		}
		attempts, err := os.ReadDir(filepath.Join(dir, file.Name()))
		if err != nil {
			continue
		}
		for _, a := range attempts {
			rel := path.Join(file.Name(), a.Name())
			if !a.IsDir() || !attemptDir.MatchString(rel) {
				continue
			}
			rec := ShardRecord{Dir: rel}
			if s, err := report.ReadResults(filepath.Join(dir, file.Name(), a.Name())); err == nil {
				rec.Summary = s
			} else {
				rec.Unproven = "its summary.json does not read: " + strings.TrimPrefix(err.Error(), "--results: ")
			}
			f.Shards = append(f.Shards, rec)
		}
	}
	if len(f.Shards) == 0 {
		return nil, fmt.Errorf("%w: %s holds triage.json but no attempt's folder (FILE/head-1/, ...)", ErrNotResults, dir)
	}
	return f, nil
}

// Unproven are the shards the run record says passed whose folders do not
// prove it: a re-run runs them again, and report says so.
func (f *ResultsFolder) Unproven() []ShardRecord {
	var out []ShardRecord
	for _, s := range f.Shards {
		if s.Unproven != "" && s.Job.State == cirun.Passed {
			out = append(out, s)
		}
	}
	return out
}

// Proven is the record of a unit (cirun.JobReport.Unit) whose folder
// proves it passed.
func (f *ResultsFolder) Proven(unit string) (ShardRecord, bool) {
	for _, s := range f.Shards {
		if s.Job.Unit() == unit && s.Unproven == "" && s.Job.State == cirun.Passed {
			return s, true
		}
	}
	return ShardRecord{}, false
}

// UnprovenLines name each shard that does not prove its pass, one
// printable line each (the record names the shard and its folder), for a
// re-run's warnings and report's text.
func (f *ResultsFolder) UnprovenLines() []string {
	var out []string
	for _, s := range f.Unproven() {
		out = append(out, printable.Line(fmt.Sprintf("%s passed in attempt %d, but its folder does not prove it: %s", s.Job.Title(), max(s.Job.Attempt, 1), s.Unproven)))
	}
	return out
}

// FailedFiles are the files that failed or timed out in the folder's
// shards, in order: a ci run's failed shards, the one run's, a triage's
// head attempts.
func (f *ResultsFolder) FailedFiles() []string {
	var files []string
	for _, s := range f.Shards {
		// A ci folder's failed shards, and those its record says passed
		// that their own folders do not prove: an edited record does not
		// hide a failure its shard's summary still holds.
		failed := s.Job.State == cirun.Failed || s.Job.State == cirun.Passed && s.Unproven != ""
		if s.Summary == nil || f.Layout == LayoutCI && !failed || f.Layout == LayoutTriage && !strings.Contains(s.Dir, "/head-") {
			continue
		}
		for _, t := range s.Summary.Tests {
			if (t.Status == report.Fail || t.Status == report.Timeout) && !slices.Contains(files, t.File) {
				files = append(files, t.File)
			}
		}
	}
	return files
}

// PreviousRun is a finished ci run read back from its results folder, for
// a re-run of what failed (--rerun-failed): its record and its shards'.
type PreviousRun struct {
	*ResultsFolder
	// Report is the run record (ResultsFolder.Run).
	Report *cirun.Report
}

// ReadPreviousRun reads the results folder of a miles-ci ci run with the
// one reader (ReadResultsFolder); the kept shards' files are read when the
// re-run has run (EngineShards.keep).
func ReadPreviousRun(dir string) (*PreviousRun, error) {
	f, err := ReadResultsFolder(dir)
	if err != nil {
		return nil, fmt.Errorf("--rerun-failed: %w", err)
	}
	if f.Layout != LayoutCI {
		return nil, fmt.Errorf("--rerun-failed %s holds %s's results, not a miles-ci ci run's; give the folder miles-ci ci --results wrote", dir, map[Layout]string{LayoutRun: "a run or file-run", LayoutTriage: "a triage"}[f.Layout])
	}
	if f.Run.Run == nil {
		return nil, fmt.Errorf("--rerun-failed: %s records no run facts (commit, event, planner): it is a dry run's or an older miles-ci's; run miles-ci ci again without --rerun-failed", filepath.Join(dir, stagerun.SummaryFile))
	}
	return &PreviousRun{ResultsFolder: f, Report: f.Run}, nil
}

// ErrNotSameRun marks a --rerun-failed folder that is not an earlier
// attempt of this run (another commit, event, trigger facts or planner): a
// usage error, exit 2.
var ErrNotSameRun = errors.New("not the same run")

// NothingToRerun says whether no job of the earlier attempt failed, was
// cancelled or could not run, and every shard it passed proves it.
func (p *PreviousRun) NothingToRerun() bool {
	return len(p.Report.ToRerun()) == 0 && len(p.Unproven()) == 0
}
