package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/radixark/miles-ci/policy"
)

// maxBodySize bounds a PR body file; GitHub caps a description at 65536 characters.
const maxBodySize = 1 << 20

// stepIO is what the image, deps, patch-check and file-plan subcommands share:
// the --json and --github-output flags and the GitHub annotation format.
type stepIO struct {
	name         string
	env          Env
	flags        *flag.FlagSet
	json         bool
	githubOutput string
}

// newStepIO makes the flag set of one subcommand with the common flags.
func newStepIO(name, usage string, env Env) *stepIO {
	s := &stepIO{name: name, env: env, flags: flag.NewFlagSet(name, flag.ContinueOnError)}
	s.flags.SetOutput(env.Stderr)
	s.flags.Usage = func() {
		fmt.Fprintf(s.flags.Output(), "usage: miles-ci %s %s\n\nflags:\n", name, usage)
		s.flags.PrintDefaults()
	}
	s.flags.BoolVar(&s.json, "json", false, "print the result as JSON on stdout instead of text")
	s.flags.StringVar(&s.githubOutput, "github-output", "", "append the workflow's step outputs (key=value lines) to `FILE`, e.g. \"$GITHUB_OUTPUT\"")
	return s
}

// parse parses args; ok is false when the caller must return code at once
// (0 for -h, 2 for a usage error).
func (s *stepIO) parse(args []string) (code int, ok bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			// Asked-for help goes to stdout, like the other subcommands.
			s.flags.SetOutput(s.env.Stdout)
			s.flags.Usage()
			return 0, false
		}
	}
	if err := s.flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if s.flags.NArg() > 0 {
		return s.usageError("unexpected argument %q; every input is a flag", s.flags.Arg(0)), false
	}
	return 0, true
}

// set reports whether a flag was given on the command line.
func (s *stepIO) set(name string) bool {
	found := false
	s.flags.Visit(func(f *flag.Flag) {
		if f.Name == name {
			found = true
		}
	})
	return found
}

// orEnv returns the flag value when the flag was given, else the workflow's
// environment variable of that input.
func (s *stepIO) orEnv(flagName, value, envName string) string {
	if s.set(flagName) {
		return value
	}
	return s.env.Getenv(envName)
}

// usageError prints a usage error and returns exit code 2.
func (s *stepIO) usageError(format string, args ...any) int {
	fmt.Fprintf(s.env.Stderr, "miles-ci %s: %s\n", s.name, fmt.Sprintf(format, args...))
	s.flags.Usage()
	return 2
}

// fail prints err as GitHub error annotations and returns 1.
func (s *stepIO) fail(err error) int { return fail(s.env, err) }

// warn prints a GitHub warning annotation.
func (s *stepIO) warn(msg string) {
	fmt.Fprintf(s.env.Stderr, "::warning::%s\n", escapeAnnotation(msg))
}

// escapeAnnotation escapes what GitHub would read as annotation syntax.
func escapeAnnotation(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// parseBackend checks a --backend value against the allowed ones.
func (s *stepIO) parseBackend(value string, allowed ...policy.Backend) (policy.Backend, bool) {
	names := make([]string, len(allowed))
	for i, b := range allowed {
		if string(b) == value {
			return b, true
		}
		names[i] = string(b)
	}
	if value == "" {
		s.usageError("--backend is required; use %s", strings.Join(names, ", "))
	} else {
		s.usageError("--backend %q is not one of %s", value, strings.Join(names, ", "))
	}
	return "", false
}

// readBody returns the PR body from --pr-body-file, else from $PR_BODY.
func (s *stepIO) readBody(path string) (string, error) {
	if !s.set("pr-body-file") {
		return s.env.Getenv("PR_BODY"), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("--pr-body-file: %w; give the file holding the pull request description", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBodySize+1))
	if err != nil {
		return "", fmt.Errorf("--pr-body-file %s: %w", path, err)
	}
	if len(data) > maxBodySize {
		return "", fmt.Errorf("--pr-body-file %s: more than %d bytes; a PR description is at most 65536 characters", path, maxBodySize)
	}
	return string(data), nil
}

// output is one key=value step output.
type output struct{ key, value string }

// emit prints the result (JSON or text) and appends the step outputs.
func (s *stepIO) emit(result any, text string, outputs []output) int {
	if err := s.writeOutputs(outputs); err != nil {
		return s.fail(err)
	}
	if s.json {
		return printJSON(s.env, result)
	}
	io.WriteString(s.env.Stdout, text)
	return 0
}

// writeOutputs appends key=value lines to the --github-output file.
func (s *stepIO) writeOutputs(outputs []output) error {
	if s.githubOutput == "" {
		return nil
	}
	lines := make([]string, len(outputs))
	for i, o := range outputs {
		if strings.ContainsAny(o.value, "\r\n") {
			return fmt.Errorf("step output %s holds a line break; refusing to write it to %s", o.key, s.githubOutput)
		}
		lines[i] = o.key + "=" + o.value
	}
	return appendGitHubOutput(s.githubOutput, lines)
}

// readSmallFile reads a file a flag names, up to 1 MiB.
func readSmallFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBodySize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}
