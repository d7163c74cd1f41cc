// Package cli implements the miles-ci subcommands. The command-line tool and the
// Dagger module both call Run, so they print the same answers.
package cli

import (
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/radixark/miles-ci/internal/nearest"
	"github.com/radixark/miles-ci/internal/printable"
)

// DaggerEngineVersion is the Dagger engine the module targets: dagger.json's
// engineVersion (a test keeps the two equal).
const DaggerEngineVersion = "v0.21.8"

// modulePath is the Go module miles-ci is built from.
const modulePath = "github.com/radixark/miles-ci"

// Env is what a subcommand may touch of the outside world.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable; flags fall back to the workflow's env vars.
	Getenv func(string) string
	// LookupEnv also says whether the variable is set (nil: set when
	// Getenv is not empty), for comment, which answers as Miles' script on
	// an unset variable.
	LookupEnv func(string) (string, bool)
	// made lists the folders this invocation made for its results (Run
	// sets it); those still empty when it ends are removed.
	made *madeFolders
}

// lookupEnv is env.LookupEnv, or Getenv where it is not given.
func (e Env) lookupEnv(name string) (string, bool) {
	if e.LookupEnv != nil {
		return e.LookupEnv(name)
	}
	v := e.Getenv(name)
	return v, v != ""
}

// secret looks a secret up in the environment, an empty value being none
// (the lookup of stagerun.HandedSecrets, which decides who gets them).
func (e Env) secret(name string) (string, bool) {
	v := e.Getenv(name)
	return v, v != ""
}

// command is one subcommand: its one-line summary and its entry point.
type command struct {
	summary string
	run     func(args []string, env Env) int
}

// commands lists every subcommand; each lives in its own file.
var commands = map[string]command{}

func register(name, summary string, run func(args []string, env Env) int) {
	commands[name] = command{summary: summary, run: run}
}

// Run executes one miles-ci invocation (args without the program name) and
// returns the process exit code.
func Run(args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	// The one way out: every line any command prints passes the writer
	// (printable.Writer), whatever it quotes.
	out, errw := printable.NewWriter(env.Stdout), printable.NewWriter(env.Stderr)
	defer errw.Flush()
	defer out.Flush()
	env.Stdout, env.Stderr = out, errw
	// A run that never ran leaves no folder it made (results: folders).
	env.made = &madeFolders{}
	defer env.made.removeEmpty()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.Stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintf(env.Stdout, "miles-ci %s (module %s)\nDagger engine %s (dagger.json engineVersion)\n", moduleVersion(), modulePath, DaggerEngineVersion)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		names := make([]string, 0, len(commands))
		for n := range commands {
			names = append(names, n)
		}
		sort.Strings(names)
		guess := ""
		if n := nearest.Name(args[0], names); n != "" {
			guess = "did you mean " + n + "? "
		}
		fmt.Fprintf(env.Stderr, "miles-ci: unknown command %q; %srun 'miles-ci help' for the list\n", args[0], guess)
		return 2
	}
	return cmd.run(args[1:], env)
}

func usage(w io.Writer) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("usage: miles-ci COMMAND [flags]\n\ncommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-12s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun 'miles-ci COMMAND -h' for a command's flags, 'miles-ci --version' for the version.\n")
	io.WriteString(w, b.String())
}

// moduleVersion is the version of the module the binary was built from:
// "v1.2.3" when installed with go install ...@v1.2.3, "(devel)" from a checkout.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Path == modulePath && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
