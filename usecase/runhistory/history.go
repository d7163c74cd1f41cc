// Package runhistory holds the use cases of the runtime history: recording a
// run (and each shard of a graph run), importing results folders, est-time's
// calibration and the history's questions (flaky, shards). Only the command
// imports it, so the Dagger module, which records nothing, links neither
// history driver (TestModuleLinksNoHistory).
package runhistory

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/internal/atomicwrite"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/plural"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/triage"
	"github.com/radixark/miles-ci/usecase"
)

// DB is the runtime history a command uses: the --db flag, else
// MILES_CI_HISTORY_DB, else the default SQLite file. configured says
// whether one was named (a run then records without --record).
func DB(flag string, getenv func(string) string) (db string, configured bool, err error) {
	if flag != "" {
		return flag, true, nil
	}
	if v := getenv(history.EnvDB); v != "" {
		return v, true, nil
	}
	db, err = history.DefaultPath()
	return db, false, err
}

// EstTimeRequest is `miles-ci est-time`: calibrate a checkout's est_time
// literals from the history (rules §13.2).
type EstTimeRequest struct {
	// Repo is the Miles checkout whose test files are rewritten.
	Repo string
	// DB is the history (see DB).
	DB string
	// AsOf is the UTC date whose midnight ends the window.
	AsOf time.Time
	// DryRun computes the changes and the report and writes no test file.
	DryRun bool
	// Backends widen Miles' CUDA-only scope (an extension; nil = CUDA).
	Backends []policy.Backend
	// Events widen Miles' schedule-only samples (an extension; nil =
	// schedule). "local" adds the local runs.
	Events []string
	// Repository is OWNER/NAME for the report's links (GITHUB_REPOSITORY,
	// else radixark/miles).
	Repository string
	// Warn gets the rows the store skipped (history.Store.Skipped); nil
	// drops them.
	Warn func(string)
}

// warnSkipped passes what a store's reads skipped to warn.
func warnSkipped(store history.Store, warn func(string)) {
	if warn == nil {
		return
	}
	for _, w := range store.Skipped() {
		warn(w)
	}
}

// Validate checks the request before anything is read.
func (r EstTimeRequest) Validate() error {
	if r.DB == "" {
		return errors.New("est-time: no history database; give --db or set " + history.EnvDB)
	}
	if r.AsOf.IsZero() {
		return errors.New("est-time: no --as-of date")
	}
	for _, e := range r.Events {
		if e == "" || strings.ContainsAny(e, " ,") {
			return fmt.Errorf("--events: %q is not an event name; give names such as schedule push local", e)
		}
	}
	return usecase.CheckHistoryEvents(r.Events)
}

// EstTimeResult is what the calibration changed.
type EstTimeResult struct {
	From    time.Time `json:"from"`
	Before  time.Time `json:"before"`
	Samples int       `json:"samples"`
	// Found says what the read found and left out, and why (Found).
	Found   string            `json:"found"`
	Changes []estimate.Change `json:"changes"`
	// Files are the test files rewritten (or, with DryRun, to rewrite).
	Files  []string `json:"files"`
	DryRun bool     `json:"dry_run"`
	// Report is Miles' Markdown report.
	Report string `json:"report"`
}

// EstTime reads the samples, estimates each identity, and replaces the
// est_time literals that differ, every file rendered before any is written
// and every other byte kept. Any read, parse or write error fails it.
func EstTime(ctx context.Context, r EstTimeRequest) (EstTimeResult, error) {
	if err := r.Validate(); err != nil {
		return EstTimeResult{}, err
	}
	root, err := policy.CheckCheckout(r.Repo)
	if err != nil {
		return EstTimeResult{}, err
	}
	from, before := estimate.Window(r.AsOf)
	events := r.Events
	if len(events) == 0 {
		events = []string{"schedule"}
	}
	scope := estimate.DefaultScope
	if len(r.Backends) > 0 {
		scope = estimate.Scope{Backends: r.Backends}
	}
	store, err := history.OpenRead(ctx, r.DB)
	if err != nil {
		return EstTimeResult{}, err
	}
	defer store.Close()
	samples, found, err := readSamples(ctx, store, sampleQuery(from, before, events))
	if err != nil {
		return EstTimeResult{}, err
	}
	warnSkipped(store, r.Warn)
	estimates := estimate.Build(samples)
	_, reg, err := policy.LoadTablesAndRegistry(root)
	if err != nil {
		return EstTimeResult{}, err
	}
	files, eligible, err := estimate.Targets(reg.Registrations, estimates, scope)
	if err != nil {
		return EstTimeResult{}, err
	}
	res := EstTimeResult{From: from, Before: before, Samples: len(samples), Found: found, Changes: []estimate.Change{}, Files: []string{}, DryRun: r.DryRun}
	rendered := map[string][]byte{}
	realRoot, err := fsinput.RealPath(root)
	if err != nil {
		return EstTimeResult{}, fmt.Errorf("est-time: the checkout %s: %w", root, err)
	}
	targets := map[string]string{}
	for _, rel := range files {
		name, err := insideCheckout(root, realRoot, rel)
		if err != nil {
			return EstTimeResult{}, err
		}
		targets[rel] = name
		src, err := fsinput.ReadFile(name, fsinput.TestFile)
		if err != nil {
			return EstTimeResult{}, err
		}
		sites, err := reg.Tables.EstTimeSites(rel, src)
		if err != nil {
			return EstTimeResult{}, err
		}
		out, changes, err := estimate.RewriteFile(rel, src, sites, eligible, scope)
		if err != nil {
			return EstTimeResult{}, err
		}
		if len(changes) > 0 {
			rendered[rel] = out
			res.Files = append(res.Files, rel)
			res.Changes = append(res.Changes, changes...)
		}
	}
	if !r.DryRun {
		// All or nothing: every file to a synced temporary, then renamed.
		var out []atomicwrite.File
		for _, rel := range res.Files {
			out = append(out, atomicwrite.File{Path: targets[rel], Data: rendered[rel]})
		}
		if err := atomicwrite.Replace(out); err != nil {
			return EstTimeResult{}, fmt.Errorf("est-time: %w", err)
		}
	}
	repo := r.Repository
	if repo == "" {
		repo = estimate.DefaultRepository
	}
	res.Report = estimate.Report(res.Changes, from, before, repo)
	return res, nil
}

// insideCheckout is the file a test path names, its links resolved, when
// it lies inside the checkout: est-time rewrites no file outside it.
func insideCheckout(root, realRoot, rel string) (string, error) {
	name := filepath.Join(root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(name)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return "", fmt.Errorf("est-time: %s: %w", rel, err)
	}
	if !fsinput.Within(real, realRoot) {
		return "", fmt.Errorf("est-time: %s leads through a symlink to %s, outside the checkout %s; miles-ci rewrites no file outside the checkout, so replace the link with the file", rel, real, root)
	}
	return real, nil
}

// RecordRequest is the recording after `miles-ci run` or `file-run` (and a
// graph run's shard): the run's attempts into the history.
type RecordRequest struct {
	// DB is the history (see DB).
	DB string
	// Summary is the run's summary.
	Summary report.Summary
	// Provenance is the run's (history.ProvenanceFromEnv).
	Provenance history.Provenance
	// Repo is the checkout, for an est_time the summary lacks.
	Repo string
	// At is when the run ended (recorded_at).
	At time.Time
	// Timeout bounds the whole recording (0: RecordTimeout).
	Timeout time.Duration
}

// Validate checks the request before anything is written.
func (r RecordRequest) Validate() error {
	if r.DB == "" {
		return errors.New("no runtime history database to record in; give --db or set " + history.EnvDB)
	}
	if r.At.IsZero() {
		return errors.New("the recording has no time (RecordRequest.At)")
	}
	return nil
}

// RecordTimeout bounds a run's whole recording (every shard's), after its
// verdict is printed: a store that stalls costs the run at most this.
const RecordTimeout = time.Minute

// Record writes the run's attempts and hands back their rows, for the
// results folder the run writes after it (Recorded.File). Its error is for
// a warning: the run's verdict never depends on it.
func Record(ctx context.Context, r RecordRequest) Recorded {
	if err := r.Validate(); err != nil {
		return Recorded{Err: err}
	}
	return recordAll(ctx, r.DB, r.Timeout, []recording{newRecording("", r, nil)})[0]
}

// CheckApart refuses a SQLite history inside the results folder, which the
// next run replaces as a whole (deleting the history with it), and a
// results folder at the history's own path or one of SQLite's files beside
// it (-wal, -shm, -journal). A Postgres history has no path to clash.
func CheckApart(db, results string) error {
	if results == "" || db == "" || history.IsPostgres(db) {
		return nil
	}
	d, r := realOrAbs(db), realOrAbs(results)
	if fsinput.Within(d, r) {
		return fmt.Errorf("the history database %s is inside --results %s, which the next run replaces as a whole; keep the database outside the results folder (the default is %s)", db, results, defaultPathOrNone())
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if r == d+suffix {
			return fmt.Errorf("--results %s is the history database's own file %s; give the results a folder of their own", results, d+suffix)
		}
	}
	return nil
}

// realOrAbs is path with its links resolved, or (when it and its folder do
// not exist yet) made absolute.
func realOrAbs(path string) string {
	if p, err := fsinput.RealPath(path); err == nil {
		return p
	}
	abs, _ := filepath.Abs(path)
	return abs
}

// defaultPathOrNone is history.DefaultPath, or words when there is none.
func defaultPathOrNone() string {
	if p, err := history.DefaultPath(); err == nil {
		return p
	}
	return "~/.cache/miles-ci/history.db"
}

// ShardsRecordRequest is a graph run's recording: every finished shard's
// summary, recorded as Record records one run.
type ShardsRecordRequest struct {
	// DB, Provenance, Repo and At are as in RecordRequest (one run: one
	// provenance for all its shards).
	DB         string
	Provenance history.Provenance
	Repo       string
	At         time.Time
	// Shards are the summaries by results folder, STAGE/2-of-4
	// (EngineShards.Summaries).
	Shards map[string]report.Summary
	// Timeout bounds the whole recording (0: RecordTimeout).
	Timeout time.Duration
	// Runs are the shards' times and predictions by results folder
	// (ShardRunsOf), each written with its shard's attempts.
	Runs map[string]history.ShardRun
}

// Recorded is how one summary's recording went, and its rows: a run
// records before it writes its results folder (the one order: the verdict,
// the history, the folder last), and keeps the rows there (File), so a
// write that failed can be imported later (history import).
type Recorded struct {
	// Dir is the summary's folder under the results folder (STAGE/2-of-4,
	// FILE/SIDE-N; "" for a run's own).
	Dir string
	// Rows are the batch as history.RowsFile holds it (nil when it could
	// not be encoded).
	Rows  []byte
	Notes []string
	// Err is the store's error, or the batch's own.
	Err error
}

// File is the file of the results folder that keeps the rows.
func (r Recorded) File() stagerun.ResultFile {
	return stagerun.ResultFile{Name: path.Join(r.Dir, history.RowsFile), Data: string(r.Rows)}
}

// RecordShards records each shard of a graph run (miles-ci ci, the
// module's ci) in folder order, on one connection, under one deadline. A
// shard's failure is its own: the others are still written, and the verdict
// never depends on it; once the store itself fails (it stalls, refuses, is
// locked), the shards after are not tried and keep their rows.
func RecordShards(ctx context.Context, r ShardsRecordRequest) []Recorded {
	dirs := make([]string, 0, len(r.Shards))
	for d := range r.Shards {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	recs := make([]recording, 0, len(dirs))
	for _, d := range dirs {
		one := RecordRequest{DB: r.DB, Summary: r.Shards[d], Provenance: r.Provenance, Repo: r.Repo, At: r.At, Timeout: r.Timeout}
		var shard *history.ShardRun
		if run, ok := r.Runs[d]; ok {
			shard = &run
		}
		recs = append(recs, newRecording(d, one, shard))
	}
	return recordAll(ctx, r.DB, r.Timeout, recs)
}

// recording is one batch to record, with its rows.
type recording struct {
	batch history.Batch
	out   Recorded
}

// newRecording makes a run's batch (with its shard's run, when it has
// one) and its rows.
func newRecording(dir string, r RecordRequest, shard *history.ShardRun) recording {
	estOf := registryEstTimes(r.Repo, r.Summary)
	b, notes, _ := history.RecordSummary(context.Background(), nil, r.Summary, r.Provenance, r.At, estOf)
	b.Shard = shard
	rec := recording{batch: b, out: Recorded{Dir: dir, Notes: notes}}
	if data, err := json.MarshalIndent(b, "", "  "); err == nil {
		rec.out.Rows = append(data, '\n')
	}
	return rec
}

// recordAll writes each batch on one connection, all under timeout (0:
// RecordTimeout) below ctx, which a signal cancels.
func recordAll(ctx context.Context, db string, timeout time.Duration, recs []recording) []Recorded {
	if timeout <= 0 {
		timeout = RecordTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := make([]Recorded, len(recs))
	var store history.Store
	var storeErr error
	told := false
	for i, rec := range recs {
		out[i] = rec.out
		if storeErr == nil && store == nil {
			store, storeErr = history.Open(ctx, db)
			if storeErr == nil {
				defer store.Close()
			}
		}
		if storeErr != nil {
			out[i].Err = storeErr
			continue
		}
		if _, err := rec.batch.Validate(); err != nil {
			out[i].Err = err // this batch's own fault
			continue
		}
		err := store.Write(ctx, rec.batch)
		var conflict *history.ConflictError
		if err != nil && !errors.As(err, &conflict) {
			storeErr = err // the store's fault: the shards after keep their rows
		}
		out[i].Err = err
		if err == nil && rec.batch.Shard != nil && store.NoShardTable() && !told {
			told = true
			out[i].Notes = append(out[i].Notes, "the database has no "+history.ShardTable+", so the shards' times were not recorded (the attempts were); miles-ci history init adds it")
		}
	}
	return out
}

// registryEstTimes looks up, in the checkout's registry, the est_time of a
// summary's files that carry none (a single-file run, or a plan from the
// container); nil when every file has one or the registry cannot be read.
func registryEstTimes(repo string, s report.Summary) func(string) float64 {
	need := slices.ContainsFunc(s.Tests, func(t report.TestResult) bool { return t.EstTime <= 0 && t.Status != report.NotRun })
	if !need || repo == "" {
		return nil
	}
	reg, err := policy.LoadRegistry(repo)
	if err != nil {
		return nil
	}
	return func(file string) float64 {
		for _, g := range reg.Registrations {
			if g.File == file && g.Backend == s.HW && g.Suite == s.Suite {
				return g.EstTime
			}
		}
		return 0
	}
}

// ImportRequest is `miles-ci history import`: results folders into the
// history.
type ImportRequest struct {
	DB      string
	Results []string
	// Repo is the checkout, for an est_time an older summary lacks.
	Repo string
	// RunID names a local run (default: the hash of each summary.json, so
	// importing a folder twice writes it once).
	RunID  string
	Getenv func(string) string
}

// Validate checks the request before anything is read.
func (r ImportRequest) Validate() error {
	if len(r.Results) == 0 {
		return errors.New("history import: give --results DIR ... (folders a run wrote)")
	}
	if r.DB == "" {
		return errors.New("history import: no history database; give --db or set " + history.EnvDB)
	}
	return nil
}

// Imported is one folder's import.
type Imported struct {
	Dir      string   `json:"dir"`
	Attempts int      `json:"attempts"`
	From     string   `json:"from"`
	Notes    []string `json:"notes,omitempty"`
}

// Import records each folder's kept rows (history.RowsFile), else the
// attempts of its summary.json with the provenance of this environment;
// one batch per folder, the first failure ends it.
func Import(ctx context.Context, r ImportRequest) ([]Imported, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	store, err := history.Open(ctx, r.DB)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var out []Imported
	for _, sf := range shardFolders(r.Results) {
		dir := sf.dir
		if sf.unproven != "" {
			out = append(out, Imported{Dir: dir, Notes: []string{"not imported: its folder does not prove what the run record says: " + sf.unproven}})
			continue
		}
		b, im, err := importBatch(dir, r)
		if err != nil {
			return out, err
		}
		if sf.unchecked != "" {
			im.Notes = append(im.Notes, "imported unchecked: "+sf.unchecked)
		}
		if err := store.Write(ctx, b); err != nil {
			return out, fmt.Errorf("%s: %w", dir, err)
		}
		out = append(out, im)
	}
	return out, nil
}

// shardFolder is a folder to import; unproven says why the one reader does
// not take a ci run's shard folder as the run wrote it ("" when it does),
// unchecked why it could not check it (a run record without digests).
type shardFolder struct{ dir, unproven, unchecked string }

// shardFolders are the folders to import: a ci run's or a triage's results
// folder stands for each of its shards' (the one reader of results
// folders, usecase.ReadResultsFolder, finds them), any other for itself. A
// ci shard whose folder does not prove what the record says of it (an
// edited or damaged folder) is named and not imported, as a re-run runs it
// again; one of a record without digests (an older miles-ci's) is imported
// with a note that it is unchecked.
func shardFolders(dirs []string) []shardFolder {
	var out []shardFolder
	for _, dir := range dirs {
		f, err := usecase.ReadResultsFolder(dir)
		if err != nil || f.Layout == usecase.LayoutRun {
			out = append(out, shardFolder{dir: dir})
			continue
		}
		for _, s := range f.Shards {
			if s.Summary == nil {
				continue
			}
			sf := shardFolder{dir: filepath.Join(dir, filepath.FromSlash(s.Dir))}
			switch {
			case f.Layout != usecase.LayoutCI || s.Unproven == "":
			case s.Job.SummarySHA256 == "":
				sf.unchecked = s.Unproven
			default:
				sf.unproven = s.Unproven
			}
			out = append(out, sf)
		}
	}
	return out
}

func importBatch(dir string, r ImportRequest) (history.Batch, Imported, error) {
	kept := filepath.Join(dir, history.RowsFile)
	data, err := fsinput.ReadFile(kept, fsinput.Kind{Name: "a history-rows.json", Max: report.MaxResultsSize, NoLink: true})
	if err == nil {
		b, err := history.ParseRows(kept, data)
		if err != nil {
			return b, Imported{}, err
		}
		return b, Imported{Dir: dir, Attempts: len(b.Attempts), From: history.RowsFile}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return history.Batch{}, Imported{}, err
	}
	s, raw, err := report.ReadResultsData(dir)
	if err != nil {
		return history.Batch{}, Imported{}, err
	}
	runID := r.RunID
	if runID == "" {
		sum := sha256.Sum256(raw)
		runID = fmt.Sprint(binary.BigEndian.Uint64(sum[:8]) >> 1)
	}
	p, err := history.ProvenanceFromEnv(r.Getenv, r.Getenv("GITHUB_SHA"), runID)
	if err != nil {
		return history.Batch{}, Imported{}, err
	}
	at := time.Now()
	if info, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		at = info.ModTime()
	}
	b, notes, _ := history.RecordSummary(context.Background(), nil, *s, p, at, registryEstTimes(r.Repo, *s))
	return b, Imported{Dir: dir, Attempts: len(b.Attempts), From: "summary.json", Notes: notes}, nil
}

// Flaky is a test identity whose outcome changed without its code
// changing: a pass and a fail at one commit, or a pass only on a retry.
type Flaky struct {
	estimate.Identity
	// Commits are the commits at which it both passed and failed.
	Commits []string `json:"commits"`
	// RetryPasses counts the runs in which it passed only after a failed attempt.
	RetryPasses int `json:"retry_passes"`
	// Passes and Fails count its attempts (TIMEOUT counts as a fail).
	Passes int `json:"passes"`
	Fails  int `json:"fails"`
	// Triage is the verdict of its latest miles-ci triage, read back from
	// the triage's attempts (nil when it was never triaged).
	Triage *TriageVerdict `json:"triage,omitempty"`
}

// TriageVerdict is a triage's verdict on one file as the history holds it.
type TriageVerdict struct {
	Session string         `json:"session"`
	Verdict triage.Verdict `json:"verdict"`
	Counts  triage.Counts  `json:"counts"`
}

// FlakyRequest is `miles-ci history flaky`.
type FlakyRequest struct {
	// DB is the history (see DB).
	DB string
	// Since leaves out older rows (the zero time: none).
	Since time.Time
	// Warn gets the rows the store skipped; nil drops them.
	Warn func(string)
}

// Validate checks the request before anything is read.
func (r FlakyRequest) Validate() error {
	if r.DB == "" {
		return errors.New("history flaky: no history database; give --db or set " + history.EnvDB)
	}
	return nil
}

// FlakyFiles ranks the flaky identities of the history's rows: by flaky
// commits plus retry passes, then by fails, then by identity.
func FlakyFiles(ctx context.Context, r FlakyRequest) ([]Flaky, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	store, err := history.OpenRead(ctx, r.DB)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	rows, err := store.Rows(ctx, r.Since, time.Time{})
	if err != nil {
		return nil, err
	}
	warnSkipped(store, r.Warn)
	type run struct {
		id      int64
		attempt int
	}
	byID := map[estimate.Identity]*Flaky{}
	triaged := triageVerdicts(rows)
	outcomes := map[estimate.Identity]map[string][2]bool{} // commit -> passed, failed
	passedAt := map[estimate.Identity]map[run]int{}        // run -> the passing test attempt
	failedBefore := map[estimate.Identity]map[run]bool{}
	for _, r := range rows {
		id := estimate.Identity{TestPath: r.TestPath, Backend: r.Backend, Suite: r.Suite}
		f := byID[id]
		if f == nil {
			f = &Flaky{Identity: id, Commits: []string{}}
			byID[id] = f
			outcomes[id], passedAt[id], failedBefore[id] = map[string][2]bool{}, map[run]int{}, map[run]bool{}
		}
		o := outcomes[id][r.CommitSHA]
		ru := run{r.RunID, r.RunAttempt}
		if r.Status == history.Pass {
			f.Passes++
			o[0] = true
			passedAt[id][ru] = r.TestAttempt
		} else {
			f.Fails++
			o[1] = true
			failedBefore[id][ru] = true
		}
		outcomes[id][r.CommitSHA] = o
	}
	var out []Flaky
	for id, f := range byID {
		for commit, o := range outcomes[id] {
			if o[0] && o[1] && commit != "unknown" {
				f.Commits = append(f.Commits, commit)
			}
		}
		slices.Sort(f.Commits)
		for ru, n := range passedAt[id] {
			if n > 1 && failedBefore[id][ru] {
				f.RetryPasses++
			}
		}
		f.Triage = triaged[id]
		if len(f.Commits) > 0 || f.RetryPasses > 0 || f.Triage != nil && f.Triage.Verdict == triage.Flaky {
			out = append(out, *f)
		}
	}
	slices.SortFunc(out, func(a, b Flaky) int {
		if c := (len(b.Commits) + b.RetryPasses) - (len(a.Commits) + a.RetryPasses); c != 0 {
			return c
		}
		if c := b.Fails - a.Fails; c != 0 {
			return c
		}
		return strings.Compare(a.TestPath+"\x00"+a.Backend+"\x00"+a.Suite, b.TestPath+"\x00"+b.Backend+"\x00"+b.Suite)
	})
	return out, nil
}

// triageVerdicts are the verdicts of each identity's latest triage, read
// from its attempts' rows (event triage, ref refs/triage/SESSION/SIDE):
// the same rule (triage.Decide) over the same attempts, with K the number
// of head attempts. A triage stopped before its verdict was certain is
// inconclusive.
func triageVerdicts(rows []history.Row) map[estimate.Identity]*TriageVerdict {
	type key struct {
		id      estimate.Identity
		session string
	}
	type attempt struct {
		side triage.Side
		n    int
	}
	passed := map[key]map[attempt]bool{}
	latest := map[estimate.Identity]key{}
	at := map[key]time.Time{}
	for _, r := range rows {
		session, side, ok := triage.RefParts(r.Ref)
		if r.Event != triage.Event || !ok {
			continue
		}
		k := key{estimate.Identity{TestPath: r.TestPath, Backend: r.Backend, Suite: r.Suite}, session}
		if passed[k] == nil {
			passed[k] = map[attempt]bool{}
		}
		a := attempt{side, r.RunAttempt}
		passed[k][a] = passed[k][a] || r.Status == history.Pass // a retry's pass passes the attempt
		if r.RecordedAt.After(at[k]) || at[k].IsZero() {
			at[k] = r.RecordedAt
		}
		if l, ok := latest[k.id]; !ok || at[k].After(at[l]) || at[k].Equal(at[l]) && session > l.session {
			latest[k.id] = k
		}
	}
	out := map[estimate.Identity]*TriageVerdict{}
	for id, k := range latest {
		var as []triage.Attempt
		heads := 0
		for a, ok := range passed[k] {
			o := triage.Fail
			if ok {
				o = triage.Pass
			}
			if a.side == triage.Head {
				heads++
			}
			as = append(as, triage.Attempt{Side: a.side, N: a.n, Outcome: o})
		}
		d := triage.Decide(as, heads)
		if !d.Final {
			d = triage.Stop(d, "stopped")
		}
		out[id] = &TriageVerdict{Session: k.session, Verdict: d.Verdict, Counts: d.Counts}
	}
	return out
}

// ShardsRequest is `miles-ci history shards`: a stage's shards under
// today's est_time and under the calibrated ones, against what they took.
type ShardsRequest struct {
	Repo, DB, Stage string
	AsOf            time.Time
	Events          []string
	// Warn gets the rows the store skipped; nil drops them.
	Warn func(string)
}

// Validate checks the request before anything is read.
func (r ShardsRequest) Validate() error {
	if r.Stage == "" {
		return errors.New("history shards: give --stage S")
	}
	if r.DB == "" || r.AsOf.IsZero() {
		return errors.New("history shards: no history database or date")
	}
	return usecase.CheckHistoryEvents(r.Events)
}

// ShardLoad is one shard's predicted and observed seconds.
type ShardLoad struct {
	Shard int `json:"shard"`
	// Today is the shard's est_time total as the checkout splits it now.
	Today float64 `json:"today_s"`
	// Observed is what today's shard took: each file's latest PASS
	// seconds, its est_time where it has none (Unobserved counts those,
	// UnobservedEst is their est_time: never an observation).
	Observed      float64 `json:"observed_s"`
	Unobserved    int     `json:"unobserved"`
	UnobservedEst float64 `json:"unobserved_est_time_s"`
	// Calibrated is the shard of the same index when the stage is split by
	// the calibrated est_time (today's where a file has no estimate).
	Calibrated float64 `json:"calibrated_s"`
	// Files are today's shard's files.
	Files []string `json:"files"`
}

// ShardsAnswer is a stage's shards and the job's timeout.
type ShardsAnswer struct {
	Stage    string `json:"stage"`
	TimeoutS int    `json:"timeout_s"`
	// Found says what the read found and left out, and why (Found).
	Found  string      `json:"found"`
	Shards []ShardLoad `json:"shards"`
}

// Text is the answer as `history shards` prints it. "observed" is only ever
// what ran: a file without a sample is counted at its est_time and said so.
func (a ShardsAnswer) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: job timeout %ds\n", a.Stage, a.TimeoutS)
	for _, s := range a.Shards {
		over := ""
		if s.Observed > float64(a.TimeoutS) || s.Calibrated > float64(a.TimeoutS) {
			over = "  OVER THE TIMEOUT: add a shard"
		}
		load := fmt.Sprintf("observed %.0fs", s.Observed)
		if s.Unobserved > 0 {
			load = fmt.Sprintf("observed %.0fs + est_time %.0fs of the %d never observed = %.0fs", s.Observed-s.UnobservedEst, s.UnobservedEst, s.Unobserved, s.Observed)
		}
		fmt.Fprintf(&b, "  %s: est_time %.0fs, calibrated est_time %.0fs, %s (%s)%s\n",
			policy.Partition{ID: s.Shard, Size: len(a.Shards)}, s.Today, s.Calibrated, load, plural.N(len(s.Files), "file"), over)
	}
	return b.String()
}

// Shards splits the stage's regular-cadence tests (every label) as rules
// §5 does, once by today's est_time and once by the calibrated ones.
func Shards(ctx context.Context, r ShardsRequest) (ShardsAnswer, error) {
	if err := r.Validate(); err != nil {
		return ShardsAnswer{}, err
	}
	root, err := policy.CheckCheckout(r.Repo)
	if err != nil {
		return ShardsAnswer{}, err
	}
	tables, reg, err := policy.LoadTablesAndRegistry(root)
	if err != nil {
		return ShardsAnswer{}, err
	}
	st, err := usecase.LookupStage(tables, r.Stage)
	if err != nil {
		return ShardsAnswer{}, err
	}
	plan, err := policy.BuildPlan(reg, policy.PlanRequest{HW: st.Backend, Suite: st.Name, Cadence: policy.Regular, MatchAllLabels: true})
	if err != nil {
		return ShardsAnswer{}, err
	}
	store, err := history.OpenRead(ctx, r.DB)
	if err != nil {
		return ShardsAnswer{}, err
	}
	defer store.Close()
	events := r.Events
	if len(events) == 0 {
		events = []string{"schedule"}
	}
	from, before := estimate.Window(r.AsOf)
	samples, found, err := readSamples(ctx, store, sampleQuery(from, before, events))
	if err != nil {
		return ShardsAnswer{}, err
	}
	warnSkipped(store, r.Warn)
	estimates := estimate.Build(samples)
	latest := map[string]float64{}
	for _, s := range samples { // newest first within an identity
		if _, ok := latest[s.TestPath]; !ok && s.Backend == estimate.BackendName(st.Backend) && s.Suite == st.Name {
			latest[s.TestPath] = s.ElapsedS
		}
	}
	var today, calibrated []policy.Registration
	for _, t := range plan.Enabled {
		g := policy.Registration{File: t.File, EstTime: t.EstTime}
		today = append(today, g)
		if e, ok := estimates[estimate.Identity{TestPath: t.File, Backend: estimate.BackendName(st.Backend), Suite: st.Name}]; ok {
			g.EstTime = float64(e.EstTime)
		}
		calibrated = append(calibrated, g)
	}
	n := max(st.Shards, 1)
	p := policy.ProfileOf(st.Backend)
	ans := ShardsAnswer{Stage: st.Name, TimeoutS: tables.RunSteps.TimeoutMinutes(st.Backend, p.StageTimeoutMinutes) * 60, Found: found}
	cal := policy.AssignShards(calibrated, n)
	for i, shard := range policy.AssignShards(today, n) {
		l := ShardLoad{Shard: i, Files: []string{}}
		for _, t := range shard {
			l.Today += t.EstTime
			l.Files = append(l.Files, t.File)
			if s, ok := latest[t.File]; ok {
				l.Observed += s
			} else {
				l.Observed += t.EstTime
				l.UnobservedEst += t.EstTime
				l.Unobserved++
			}
		}
		for _, t := range cal[i] {
			l.Calibrated += t.EstTime
		}
		ans.Shards = append(ans.Shards, l)
	}
	return ans, nil
}
