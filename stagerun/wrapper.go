package stagerun

import _ "embed"

// runWrapper is the run step: miles-ci's own process between the engine
// and the runner. It runs as `python3 -ISc WRAPPER miles-ci-run [OPTION...] --
// COMMAND...` (every value a positional argument, never shell), and:
//
//   - raises the §9 limits (--ulimit FLAG VALUE, bash's flags and units)
//     and makes the AMD device nodes (--rocm-devices), warning at the top of
//     the log where it cannot;
//   - starts the runner in its own session with no stdin, its stdout and
//     stderr one pipe the wrapper alone reads: the runner's output goes to
//     the wrapper's stdout (the engine keeps it; that is run.log) up to a
//     cap (--log-cap BYTES: the first and last halves are kept, and a line
//     says how much was cut in between), and the lines shaped like
//     run_suite.py's status lines are kept apart (4096 at most, 1024 bytes
//     each, taken from a line's end, as a test's unfinished line may come
//     first), so no flood of output can cut them;
//   - ends the run itself after --timeout SECONDS (TERM to the runner's
//     session, KILL --kill-after seconds later): the only way a run or a
//     single file is a TIMEOUT;
//   - when the runner has ended, with --reap, kills every other process of
//     the exec (tests' background children, a `sleep infinity` holding the
//     pipe), so the run ends when the runner ends; only inside a Dagger exec
//     (its PID 1 is Dagger's /.init), never on a host;
//   - writes, as its last line of stderr, after every other process is
//     gone, its record of the run (report.RunRecord), and exits with the
//     runner's exit status where the engine can carry it (0-127, 192-255),
//     else 192, so the engine's status and the record must agree.
//
//go:embed scripts/run-wrapper.py
var runWrapper string

// wrapper is the argv that runs the run wrapper with its options and
// command. -I (isolated: no PYTHON* variable, no user site, neither the
// working folder nor PYTHONPATH on sys.path) and -S (no site module: no
// sitecustomize, usercustomize or .pth file is run) keep the checkout's
// code out of the wrapper's process; it needs only the standard library.
func wrapper(opts []string, command []string) []string {
	argv := []string{"python3", "-ISc", runWrapper, "miles-ci-run"}
	argv = append(argv, opts...)
	return append(append(argv, "--"), command...)
}

// RunWrapper returns the text of the run wrapper (for tests that run it).
func RunWrapper() string { return runWrapper }
