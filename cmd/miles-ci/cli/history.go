package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/nearest"
	"github.com/radixark/miles-ci/internal/plural"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase/runhistory"
)

func init() {
	register("est-time", "calibrate the checkout's CUDA e2e est_time literals from the runtime history, as Miles' update_est_time.py (rules §13)", estTime)
	register("history", "the runtime history: "+strings.Join(historyVerbs, ", ")+" (rules §13; docs/history.md)", historyCmd)
}

// dbFlag is --db, shared by the history commands.
func dbFlag(fs *flagSet) *string {
	return fs.String("db", "URL|PATH", "the runtime history: postgres://USER@HOST/DB or a SQLite file (default: $"+history.EnvDB+", else ~/.cache/miles-ci/history.db); keep a password in $"+history.EnvDB+" or ~/.pgpass, not here")
}

// historyDB resolves --db and warns when a password is on the command line.
func historyDB(fs *flagSet, flag string, env Env) (string, bool, error) {
	db, configured, err := runhistory.DB(flag, env.Getenv)
	if fs.Given("db") && history.HasPassword(flag) {
		warn(env, "--db holds a password, which every user of this machine can read in the process list; set "+history.EnvDB+" or use ~/.pgpass instead")
	}
	return db, configured, err
}

func estTime(args []string, env Env) int {
	fs := newFlagSet("est-time", "[--repo DIR] [--db URL|PATH] [--as-of YYYY-MM-DD] [--dry-run] [--report-file F] [--json]\n"+
		"    [--backends cuda|cpu|rocm ...] [--events E ...]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout whose test files are rewritten (default: the current folder)")
	db := dbFlag(fs)
	asOf := fs.String("as-of", "YYYY-MM-DD", "the UTC date whose midnight ends the 21-day window (default: today)")
	dryRun := fs.Bool("dry-run", "print the report and change no test file")
	reportFile := fs.String("report-file", "F", "also write the Markdown report to F")
	asJSON := fs.Bool("json", "print the changes as JSON instead of the report")
	backends := fs.List("backends", "B", "extension: calibrate these backends' registrations too (default: cuda only, as Miles)")
	events := fs.List("events", "E", "extension: samples of these events (default: schedule only, as Miles; local adds local runs)")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	req := runhistory.EstTimeRequest{Repo: *repo, DryRun: *dryRun, Events: *events, Repository: env.Getenv("GITHUB_REPOSITORY"), Warn: historyWarn(env)}
	var err error
	if req.DB, _, err = historyDB(fs, *db, env); err != nil {
		return fail(env, err)
	}
	if req.AsOf, err = asOfDate(*asOf); err != nil {
		return fs.usageError("%v", err)
	}
	for _, b := range *backends {
		if !slices.Contains([]policy.Backend{policy.CPU, policy.CUDA, policy.ROCM}, policy.Backend(b)) {
			return fs.usageError("--backends: %q is not cpu, cuda or rocm", b)
		}
		req.Backends = append(req.Backends, policy.Backend(b))
	}
	ctx, stop := signalContext(env)
	defer stop()
	res, err := runhistory.EstTime(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	if *reportFile != "" {
		if err := os.WriteFile(*reportFile, []byte(res.Report), 0o644); err != nil {
			return fail(env, fmt.Errorf("--report-file: %w", err))
		}
	}
	// What the read found goes beside Miles' report, which stays its bytes.
	annotate(env, "notice", "est-time: "+res.Found)
	if *asJSON {
		return printJSON(env, res)
	}
	io.WriteString(env.Stdout, ghoutput.Plain(res.Report))
	return 0
}

// asOfDate is --as-of: the date given, else today in UTC.
func asOfDate(text string) (time.Time, error) {
	if text == "" {
		return time.Now().UTC(), nil
	}
	d, err := time.Parse("2006-01-02", text)
	if err != nil {
		return time.Time{}, fmt.Errorf("--as-of %q is not a date; give YYYY-MM-DD", text)
	}
	return d, nil
}

// historyVerbs are history's subcommands, in the order help lists them.
var historyVerbs = []string{"init", "import", "flaky", "shards", "slowest", "trend", "chart", "predictions"}

func historyCmd(args []string, env Env) int {
	sub := map[string]func([]string, Env) int{"init": historyInit, "import": historyImport, "flaky": historyFlaky, "shards": historyShards,
		"slowest": historySlowest, "trend": historyTrend, "chart": historyChart, "predictions": historyPredictions}
	if len(args) == 0 || sub[args[0]] == nil {
		verbs := strings.Join(historyVerbs[:len(historyVerbs)-1], ", ") + " or " + historyVerbs[len(historyVerbs)-1]
		fs := newFlagSet("history", strings.Join(historyVerbs, "|")+" ... (miles-ci history SUBCOMMAND -h shows each one's flags)", env)
		if len(args) == 0 {
			return fs.usageError("give a subcommand: %s", verbs)
		}
		if strings.HasPrefix(args[0], "-") {
			if code := fs.parseOrExit(args); code >= 0 {
				return code
			}
		}
		if n := nearest.Name(args[0], historyVerbs); n != "" {
			return fs.usageError("%q is not a subcommand of history; did you mean %s?", args[0], n)
		}
		return fs.usageError("%q is not a subcommand of history; give %s", args[0], verbs)
	}
	return sub[args[0]](args[1:], env)
}

func historyInit(args []string, env Env) int {
	fs := newFlagSet("history init", "[--db URL|PATH]", env)
	db := dbFlag(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	path, _, err := historyDB(fs, *db, env)
	if err != nil {
		return fail(env, err)
	}
	ctx, stop := signalContext(env)
	defer stop()
	created, err := history.Init(ctx, path)
	if err != nil {
		return fail(env, err)
	}
	fmt.Fprintf(env.Stdout, "created %s in %s\n", created, history.Redact(path))
	return 0
}

func historyImport(args []string, env Env) int {
	fs := newFlagSet("history import", "--results DIR ... [--db URL|PATH] [--repo DIR] [--run-id ID] [--json]", env)
	results := fs.List("results", "DIR", "results folders a run wrote (summary.json, and history-rows.json when the run kept its rows)", required())
	db := dbFlag(fs)
	repo := fs.String("repo", "DIR", "the checkout the runs ran, for an est_time an older summary.json lacks")
	runID := fs.String("run-id", "ID", "outside GitHub Actions: the local run's id (default: from each summary.json, so a folder imports once)")
	asJSON := fs.Bool("json", "print what was imported as JSON")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	path, _, err := historyDB(fs, *db, env)
	if err != nil {
		return fail(env, err)
	}
	ctx, stop := signalContext(env)
	defer stop()
	got, err := runhistory.Import(ctx, runhistory.ImportRequest{DB: path, Results: *results, Repo: *repo, RunID: *runID, Getenv: env.Getenv})
	for _, im := range got {
		for _, n := range im.Notes {
			// A shard's folder is named by the run record, a note may quote
			// it: one line, one warning.
			warn(env, printable.Line(im.Dir+": "+n))
		}
	}
	if err != nil {
		return fail(env, err)
	}
	if *asJSON {
		return printJSON(env, got)
	}
	for _, im := range got {
		if im.From == "" { // not imported: a warning above says why
			continue
		}
		io.WriteString(env.Stdout, fmt.Sprintf("%s: %s from %s\n", printable.Line(im.Dir), plural.N(im.Attempts, "attempt"), im.From))
	}
	return 0
}

// recordFlags are run's and file-run's recording flags.
type recordFlags struct {
	record *bool
	db     *string
}

func addRecordFlags(fs *flagSet) recordFlags {
	return recordFlags{
		record: fs.Bool("record", "record every attempt in the runtime history (also when --db or $"+history.EnvDB+" names one)"),
		db:     dbFlag(fs),
	}
}

// recordRun records a finished run's attempts when asked, before its
// results folder is written (finish), and gives the rows to keep there
// (history-rows.json, for miles-ci history import). A failure is a
// warning: it never changes the run's exit status.
func recordRun(ctx context.Context, fs *flagSet, rf recordFlags, env Env, req runhistory.RecordRequest, commit, runID, results string) []stagerun.ResultFile {
	db, prov, on, err := historyTarget(fs, rf, env, commit, runID)
	if !on {
		return nil
	}
	if err != nil {
		warnRecordFailed(env, "", err, "")
		return nil
	}
	req.DB, req.Provenance, req.At, req.Timeout = db, prov, time.Now(), recordTimeout
	return recorded(env, db, results, "the run's attempts in %[2]s", []runhistory.Recorded{runhistory.Record(ctx, req)})
}

// recordCI records each finished shard of a ci run, under the same rules
// as recordRun: a shard whose store write fails is a warning, its rows kept
// in its own results folder.
func recordCI(ctx context.Context, fs *flagSet, rf recordFlags, env Env, req runhistory.ShardsRecordRequest, commit, runID string, attempt int, results string) []stagerun.ResultFile {
	db, prov, on, err := historyTarget(fs, rf, env, commit, runID)
	if prov.Event == history.LocalEvent {
		// A local re-run records under the same run id, as its next
		// attempt; inside Actions the attempt is GitHub's own.
		prov.RunAttempt = max(attempt, 1)
	}
	if !on || len(req.Shards) == 0 {
		return nil
	}
	if err != nil {
		warnRecordFailed(env, "", err, "")
		return nil
	}
	req.DB, req.Provenance, req.At, req.Timeout = db, prov, time.Now(), recordTimeout
	return recorded(env, db, results, "the attempts of %[1]d shard(s) in %[2]s", runhistory.RecordShards(ctx, req))
}

// recorded says how each recording went (a failed one a warning naming
// where its rows are kept: results/DIR/history-rows.json) and gives the
// rows to keep in the results folder; what says what was written where
// (%[1]d how many, %[2]s the history).
func recorded(env Env, db, results, what string, recs []runhistory.Recorded) []stagerun.ResultFile {
	var keep []stagerun.ResultFile
	written := 0
	for _, r := range recs {
		where := ""
		if r.Dir != "" {
			where = r.Dir + ": "
		}
		for _, n := range r.Notes {
			warn(env, "runtime history: "+where+n)
		}
		kept := ""
		if r.Rows != nil && results != "" {
			keep = append(keep, r.File())
			kept = filepath.Join(results, filepath.FromSlash(r.Dir))
		}
		if r.Err != nil {
			warnRecordFailed(env, where, r.Err, kept)
			continue
		}
		written++
	}
	if written > 0 {
		fmt.Fprintf(env.Stderr, "miles-ci: recorded "+what+"\n", written, strings.TrimSpace(history.Redact(db)))
	}
	return keep
}

// historyTarget is where a run records: on when --record is given or a
// history is configured; its error (a bad --db, a provenance GitHub did not
// set) is for a warning.
func historyTarget(fs *flagSet, rf recordFlags, env Env, commit, runID string) (db string, prov history.Provenance, on bool, err error) {
	db, configured, err := historyDB(fs, *rf.db, env)
	if !*rf.record && !configured {
		return "", prov, false, nil
	}
	if err == nil {
		prov, err = history.ProvenanceFromEnv(env.Getenv, commit, runID)
	}
	return db, prov, true, err
}

// recording says whether a run records in the runtime history: --record,
// or a history named (--db, the environment).
func recording(rf recordFlags, env Env) bool {
	_, configured, err := runhistory.DB(*rf.db, env.Getenv)
	return err == nil && (configured || *rf.record)
}

// checkHistoryApart refuses, before a run, a history that --results would
// replace (runhistory.CheckApart), when the run records.
func checkHistoryApart(fs *flagSet, rf recordFlags, env Env, results string) error {
	if fs == nil || results == "" {
		return nil
	}
	db, configured, err := runhistory.DB(*rf.db, env.Getenv)
	if err != nil || !*rf.record && !configured {
		return nil
	}
	return runhistory.CheckApart(db, results)
}

// historyWarn warns of what a history read skipped.
func historyWarn(env Env) func(string) {
	return func(msg string) { warn(env, "runtime history: "+msg) }
}

// recordTimeout bounds a run's whole recording (0: usecase.RecordTimeout);
// tests shorten it.
var recordTimeout time.Duration

// warnRecordFailed says a recording failed and where its rows are kept.
func warnRecordFailed(env Env, what string, err error, kept string) {
	where := ""
	if kept != "" {
		where = fmt.Sprintf("; the rows are kept in %s/%s: miles-ci history import --results %s", kept, history.RowsFile, kept)
	}
	warn(env, fmt.Sprintf("runtime history write failed (the run's result stands): %s%v%s", what, err, where))
}

func historyFlaky(args []string, env Env) int {
	fs := newFlagSet("history flaky", "[--db URL|PATH] [--days N] [--json]", env)
	db := dbFlag(fs)
	days := fs.Int("days", "N", "only the last N days (default: the whole history)", 1, 3650)
	asJSON := fs.Bool("json", "print the files as JSON")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	path, _, err := historyDB(fs, *db, env)
	if err != nil {
		return fail(env, err)
	}
	var since time.Time
	if days.Set {
		since = time.Now().UTC().AddDate(0, 0, -days.Value)
	}
	ctx, stop := signalContext(env)
	defer stop()
	got, err := runhistory.FlakyFiles(ctx, runhistory.FlakyRequest{DB: path, Since: since, Warn: historyWarn(env)})
	if err != nil {
		return fail(env, err)
	}
	if *asJSON {
		return printJSON(env, got)
	}
	if len(got) == 0 {
		io.WriteString(env.Stdout, "no flaky test file: none both passed and failed at one commit or passed only on a retry\n")
		return 0
	}
	for _, f := range got {
		triaged := ""
		if t := f.Triage; t != nil {
			triaged = fmt.Sprintf("; triage %s: %s (%s)", t.Session, t.Verdict, t.Counts)
		}
		// The store's rows are outside input: the line is one line.
		io.WriteString(env.Stdout, printable.Line(fmt.Sprintf("%s (%s, %s): %d commits with a pass and a fail, %d passes only on retry; %d passes, %d fails%s",
			f.TestPath, f.Backend, f.Suite, len(f.Commits), f.RetryPasses, f.Passes, f.Fails, triaged))+"\n")
	}
	return 0
}

func historyShards(args []string, env Env) int {
	fs := newFlagSet("history shards", "--stage S [--repo DIR] [--db URL|PATH] [--as-of YYYY-MM-DD] [--events E ...] [--json]", env)
	stage := fs.String("stage", "S", "the stage (= suite), e.g. stage-c-4-gpu-h200", required())
	repo := fs.String("repo", "DIR", "the Miles checkout (default: the current folder)")
	db := dbFlag(fs)
	asOf := fs.String("as-of", "YYYY-MM-DD", "the UTC date whose midnight ends the 21-day window (default: today)")
	events := fs.List("events", "E", "samples of these events (default: schedule; local adds local runs)")
	asJSON := fs.Bool("json", "print the shards as JSON")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	req := runhistory.ShardsRequest{Repo: *repo, Stage: *stage, Events: *events, Warn: historyWarn(env)}
	var err error
	if req.DB, _, err = historyDB(fs, *db, env); err != nil {
		return fail(env, err)
	}
	if req.AsOf, err = asOfDate(*asOf); err != nil {
		return fs.usageError("%v", err)
	}
	ctx, stop := signalContext(env)
	defer stop()
	ans, err := runhistory.Shards(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	annotate(env, "notice", "history shards: "+ans.Found)
	if *asJSON {
		return printJSON(env, ans)
	}
	io.WriteString(env.Stdout, ans.Text())
	return 0
}

// historyWindowFlags are the flags of the history views that read the
// calibration's window: --repo, --db, --as-of, --events.
type historyWindowFlags struct {
	repo, db, asOf *string
	events         *[]string
}

func addHistoryWindowFlags(fs *flagSet) historyWindowFlags {
	return historyWindowFlags{
		repo:   fs.String("repo", "DIR", "the Miles checkout whose est_time is shown beside (default: the current folder)"),
		db:     dbFlag(fs),
		asOf:   fs.String("as-of", "YYYY-MM-DD", "the UTC date whose midnight ends the 21-day window (default: today)"),
		events: fs.List("events", "E", "samples of these events (default: schedule; local adds local runs)"),
	}
}

// resolve returns the database and the date; code >= 0 is an exit code.
func (f historyWindowFlags) resolve(fs *flagSet, env Env) (db string, asOf time.Time, code int) {
	db, _, err := historyDB(fs, *f.db, env)
	if err != nil {
		return "", time.Time{}, fail(env, err)
	}
	if asOf, err = asOfDate(*f.asOf); err != nil {
		return "", time.Time{}, fs.usageError("%v", err)
	}
	return db, asOf, -1
}

func historySlowest(args []string, env Env) int {
	fs := newFlagSet("history slowest", "[--top N] [--repo DIR] [--db URL|PATH] [--as-of YYYY-MM-DD] [--events E ...] [--json]", env)
	top := fs.Int("top", "N", fmt.Sprintf("list the N slowest (default %d)", runhistory.DefaultSlowest), 1, 100000)
	wf := addHistoryWindowFlags(fs)
	asJSON := fs.Bool("json", "print the tests as JSON")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	req := runhistory.SlowestRequest{Repo: *wf.repo, Events: *wf.events}
	if top.Set {
		req.Top = top.Value
	}
	var code int
	if req.DB, req.AsOf, code = wf.resolve(fs, env); code >= 0 {
		return code
	}
	ctx, stop := signalContext(env)
	defer stop()
	ans, err := runhistory.Slowest(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	annotate(env, "notice", "history slowest: "+ans.Found)
	if *asJSON {
		return printJSON(env, ans)
	}
	io.WriteString(env.Stdout, ans.Text())
	return 0
}

func historyTrend(args []string, env Env) int {
	fs := newFlagSet("history trend", "FILE [--days N] [--db URL|PATH] [--as-of YYYY-MM-DD] [--json]", env)
	days := fs.Int("days", "N", fmt.Sprintf("the last N days before --as-of's midnight (default %d)", runhistory.DefaultTrendDays), 1, 3650)
	db := dbFlag(fs)
	asOf := fs.String("as-of", "YYYY-MM-DD", "the UTC date whose midnight ends the days shown (default: tomorrow, so today's runs show)")
	asJSON := fs.Bool("json", "print the attempts as JSON")
	// FILE comes first, the one argument that is not a flag.
	var file string
	if len(args) > 0 && !isFlag(args[0]) {
		file, args = args[0], args[1:]
	}
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	if file == "" {
		return fs.usageError("give the test file, e.g. miles-ci history trend tests/e2e/megatron/test_qwen3_4b_ckpt.py")
	}
	req := runhistory.TrendRequest{File: file}
	if days.Set {
		req.Days = days.Value
	}
	var err error
	if req.DB, _, err = historyDB(fs, *db, env); err != nil {
		return fail(env, err)
	}
	if req.AsOf, err = asOfDate(*asOf); err != nil {
		return fs.usageError("%v", err)
	}
	if *asOf == "" {
		req.AsOf = req.AsOf.AddDate(0, 0, 1)
	}
	ctx, stop := signalContext(env)
	defer stop()
	ans, err := runhistory.Trend(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	if *asJSON {
		return printJSON(env, ans)
	}
	io.WriteString(env.Stdout, ans.Text())
	return 0
}

func historyChart(args []string, env Env) int {
	fs := newFlagSet("history chart", "--out FILE.svg [--stage S ...] [--top N] [--repo DIR] [--db URL|PATH] [--as-of YYYY-MM-DD] [--events E ...]", env)
	out := fs.String("out", "FILE", "write the SVG to FILE (- for stdout)", required())
	stages := fs.List("stage", "S", "draw these stages' shards (default: every stage of the roster but the B200 pool's)")
	top := fs.Int("top", "N", "draw the N slowest tests (default 40)", 1, 1000)
	wf := addHistoryWindowFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	req := runhistory.ChartRequest{Repo: *wf.repo, Events: *wf.events}
	if fs.Given("stage") {
		req.Stages = *stages
	}
	if top.Set {
		req.Top = top.Value
	}
	var code int
	if req.DB, req.AsOf, code = wf.resolve(fs, env); code >= 0 {
		return code
	}
	ctx, stop := signalContext(env)
	defer stop()
	ans, err := runhistory.Chart(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	annotate(env, "notice", "history chart: "+ans.Slowest.Found)
	if *out == "-" {
		io.WriteString(env.Stdout, ans.SVG)
		return 0
	}
	if err := fsinput.WriteFile(*out, []byte(ans.SVG), 0o644); err != nil {
		return fail(env, fmt.Errorf("--out %w", err))
	}
	fmt.Fprintf(env.Stderr, "history chart: wrote %s (%d tests, %d stages)\n", *out, len(ans.Slowest.Tests), len(ans.Shards))
	return 0
}

// historyPredictions shows each recorded graph run's span against the span
// it predicted before it ran (runhistory.Predictions).
func historyPredictions(args []string, env Env) int {
	fs := newFlagSet("history predictions", "[--db URL|PATH] [--days N] [--run ID] [--json]", env)
	db := dbFlag(fs)
	days := fs.Int("days", "N", "only the runs of the last N days (default 30)", 1, 3650)
	run := fs.String("run", "ID", "one run (its id, as --run-id or GITHUB_RUN_ID gave it), each shard's start and time against its prediction")
	asJSON := fs.Bool("json", "print the runs as JSON")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	path, _, err := historyDB(fs, *db, env)
	if err != nil {
		return fail(env, err)
	}
	req := runhistory.PredictionsRequest{DB: path, RunID: *run, Now: time.Now().UTC(), Warn: historyWarn(env)}
	if days.Set {
		req.Days = days.Value
	}
	ctx, stop := signalContext(env)
	defer stop()
	ans, err := runhistory.Predictions(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	if *asJSON {
		return printJSON(env, ans)
	}
	// The store's rows are outside input: each line is one line.
	for _, l := range strings.SplitAfter(ans.Text(), "\n") {
		if l != "" {
			io.WriteString(env.Stdout, printable.Line(strings.TrimSuffix(l, "\n"))+"\n")
		}
	}
	return 0
}
