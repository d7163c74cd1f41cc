// Package policy decides what Miles CI runs: which test files a checkout
// registers, which of them a run selects, how a suite splits into shards,
// which cadence and labels a workflow run has, which GPU stages a pull
// request skips, and whether each stage job runs. It gives the answers of
// Miles' own run_suite.py, ci_policy.py and workflow expressions, for the
// rule sets of docs/rules.md (rules §0-§5 and §11).
//
// # Tables and rule sets
//
// The values that change from one Miles commit to the next (labels, suites,
// the stage roster, PR GPU stages, no-GPU paths, crons, GPU generations) are
// Tables. BuiltinTables holds those of Miles 31f1ca9; LoadTables reads a
// checkout's own from its tests/ci/*.py literals and .github/workflows, and
// records where each came from (Tables.Origin). Tables.Rules is the rule set
// the checkout declares and Tables.Forms the later forms of it its code takes
// (ruleset.go, ruleset_detect.go; docs/rulesets.md). Every rule that differs
// between sets asks Tables, so the package-level functions (ParseFile,
// LoadRegistry, ResolveRunPolicy, Select) are the built-in tables' shorthands
// of the methods of the same name.
//
// # Backends
//
// What differs between cpu, cuda and rocm is one table, BackendProfile
// (backend.go): per backend, its image family, GPU kind, visible-devices
// variable, secrets, retry arguments, timeouts, mounts and limits, which
// deps, stagerun, report, usecase and the workflow generator read instead of
// branching on the backend's name. Backends lists them in the rules' order.
//
// # Entry points
//
//   - LoadTables, then Tables.LoadRegistry: discover the test files and parse
//     their register_*_ci calls into a Registry of Registration (rules §2).
//   - BuildPlan: one suite shard's Plan from a Registry and a PlanRequest
//     (rules §3, §5); Plan.Text is run_suite.py --list-only's text.
//   - ResolveTrigger: a Trigger (event, cron, PR labels, cadence override)
//     to a WorkflowPolicy (rules §3); Tables.Outputs is its step outputs.
//   - SelectPRStages: the StageSelection of a pull request from its diff
//     (rules §4); StageVerdicts says, per stage job, whether it runs.
//   - Explain: why one file runs, is skipped or is not selected.
//   - Lint: the Drift between the tables, the workflows and the tests.
//
// Errors callers branch on are typed: *RegistryError (a test file, with its
// line and a fix), *TableError (a CI table file), *CheckoutError (not a
// Miles checkout) and *AheadError (the checkout declares something no rule
// set covers yet, rules §11.7).
//
// # What it must not do
//
// policy is the bottom of the domain (layering.Layers): it imports no other
// package of miles-ci but its Python reader (policy/pysource) and the
// internal leaves. It never imports Dagger, never reaches the network, never
// reads the clock and never runs a process: the checkout's Python is read as
// source, never executed, and every file is read through internal/fsinput's
// bounded reads. Results are deterministic: every list is in spec order or
// sorted, never in map order.
package policy
