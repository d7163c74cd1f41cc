package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/usecase/gatestore"
)

func init() {
	register("gate", "a test file's metric-history gate verdict for its merged record, as Miles' evaluate_gate gives it (rules §16; docs/gate.md)", runGate)
}

// gateDBHelp is the help of --db (gate) and --gate-db (run, ci).
const gateDBHelp = "the metric-history store: a SQLite file (Miles' SQLiteMetricHistoryStore) or postgres://USER@HOST/DB (the Neon tables); keep a password in $" + history.EnvGateDB + " or ~/.pgpass, not here"

func runGate(args []string, env Env) int {
	fs := newFlagSet("gate", "--file F --record R.jsonl [--repo DIR] [--db URL|PATH] [--backend B] [--suite S]\n"+
		"    [--cadence C | --nightly] [--json]", env)
	file := fs.String("file", "F", "the repo-relative test file whose register_ci_gate declarations apply", required())
	record := fs.String("record", "R.jsonl", "the merged metric record of its passing attempt (one {\"metric\": KEY, \"series\": [[step, value], ...]} line per metric)", required())
	repo := fs.String("repo", "DIR", "the Miles checkout whose test file and gate code apply (default: the current folder)")
	db := fs.String("db", "URL|PATH", gateDBHelp+" (default: $"+history.EnvGateDB+", else $"+gatestore.EnvNeon+" as Miles' harness reads it; none: every coordinate is a cold start)")
	backend := fs.String("backend", "B", "the backend of the registration the run used, where the file has several", oneOf(policy.BackendNames()...))
	suite := fs.String("suite", "S", "the stage the run executed on (required where the checkout keys the baseline on it); picks the registration otherwise")
	sf := suiteFlags{
		cadence: fs.String("cadence", "C", "the run's cadence as the workflow resolved it (a PR labelled nightly runs at nightly): a nightly or weekly run stores its verdict and values in the store (default regular: a shadow verdict)", oneOf(cadenceNames()...)),
		nightly: fs.Bool("nightly", "the same as --cadence nightly"),
	}
	asJSON := fs.Bool("json", "print the verdict as JSON")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	cadence, err := sf.resolveCadence(fs)
	if err != nil {
		return fs.usageError("%v", err)
	}
	if fs.Given("db") && history.HasPassword(*db) {
		warn(env, "--db holds a password, which every user of this machine can read in the process list; set "+history.EnvGateDB+" or use ~/.pgpass instead")
	}
	req := gatestore.Request{GateRequest: usecase.GateRequest{Repo: *repo, File: *file, Backend: policy.Backend(*backend), Suite: *suite},
		DB: gatestore.DB(*db, env.Getenv, true), Cadence: cadence, Now: time.Now(),
		Lookup: func(name string) (string, bool) { v := env.Getenv(name); return v, v != "" }}
	if err := req.Validate(); err != nil {
		return fs.usageError("%v", err)
	}
	data, err := fsinput.ReadFile(*record, fsinput.Kind{Name: "a metric record", Max: metricgate.MaxRecordBytes})
	if err != nil {
		return fail(env, fmt.Errorf("--record: %w", err))
	}
	req.Record = string(data)
	if req.DB == "" {
		annotate(env, "notice", "gate: no metric-history store (--db, $"+history.EnvGateDB+" or $"+gatestore.EnvNeon+"): every coordinate is a cold start")
	}
	ctx, stop := signalContext(env)
	defer stop()
	ans, err := gatestore.Gate(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	if *asJSON {
		if code := printJSON(env, ans); code != 0 {
			return code
		}
	} else {
		io.WriteString(env.Stdout, ghoutput.Plain(gateText(ans)))
	}
	switch ans.Verdict.Verdict {
	case metricgate.Trusted:
		return 0
	case metricgate.NoVerdict:
		annotate(env, "error", "gate: "+ans.Verdict.Error)
	}
	return 1
}

// gateText is the verdict as text: the file and its verdict, a line per
// coordinate, and what the store got.
func gateText(ans gatestore.Answer) string {
	v := ans.Verdict
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %s; gate form %s): %s\n", v.TestPath, orNone(v.Backend), orNone(v.Suite), ans.Form.Name, v.Summary())
	for _, c := range v.Coordinates {
		// One line per coordinate: a metric key is the test's own text.
		b.WriteString("  " + printable.Line(c.Describe()) + "\n")
	}
	switch ans.Baseline {
	case "written":
		fmt.Fprintf(&b, "baseline: stored the run (%s, %d value(s)) in %s\n", v.Verdict, len(v.Samples()), ans.Store)
	case "shadow":
		b.WriteString("baseline: not written (a shadow verdict: only nightly and weekly runs write it)\n")
	default:
		b.WriteString("baseline: nothing to write\n")
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cadenceNames are the cadences a flag takes, in Miles' order.
func cadenceNames() []string {
	var names []string
	for _, c := range []policy.Cadence{policy.Regular, policy.Nightly, policy.Weekly, policy.Release} {
		names = append(names, string(c))
	}
	return names
}
