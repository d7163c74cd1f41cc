package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/usecase"
)

// fail prints err as GitHub error annotations (ghoutput.ErrorAnnotations: a
// registry error on its test file and line, else one annotation per line of
// the error) and returns exit code 1, or 2 for a name miles-ci does not
// know (usecase.UnknownError: a typo is a usage error). Every subcommand
// reports errors through it.
func fail(env Env, err error) int {
	writeCommands(env.Stderr, ghoutput.ErrorAnnotations(err))
	if unknown := (*usecase.UnknownError)(nil); errors.As(err, &unknown) {
		return 2
	}
	return 1
}

// warn prints a warning annotation, one per line of msg.
func warn(env Env, msg string) { annotate(env, "warning", msg) }

// printMessages prints a use case's messages, in order.
func printMessages(env Env, msgs []usecase.Message) {
	for _, m := range msgs {
		annotate(env, m.Level, m.Text)
	}
}

func annotate(env Env, level, msg string) {
	writeCommands(env.Stderr, ghoutput.Annotations(level, msg))
}

// annotateOut prints annotations on stdout (lint under GitHub Actions: each
// drift on its file and line).
func annotateOut(env Env, annotations string) { writeCommands(env.Stdout, annotations) }

// writeCommands writes workflow commands miles-ci formatted itself (their
// messages escaped by ghoutput) past the line filter of the one writer
// (printable.Writer), which Run puts on every command's stdout and stderr:
// everything else a command prints passes it, and a line that would be a
// workflow command there is broken.
func writeCommands(w io.Writer, commands string) { printable.NewWriter(w).Command(commands) }

// writeJSON prints JSON miles-ci encoded through the one writer
// (printable.Writer.JSON: the same meaning, no workflow command).
func writeJSON(w io.Writer, js []byte) { printable.NewWriter(w).JSON(js) }

// drawLive draws the live table on a terminal: its cursor moves are
// miles-ci's, its cells already printable.Line's.
func drawLive(w io.Writer, text string) { printable.NewWriter(w).Control(text) }

// isTerminal reports a writer that is a terminal (a character device) on a
// terminal type that can move the cursor.
func isTerminal(w io.Writer, getenv func(string) string) bool {
	if pw, ok := w.(*printable.Writer); ok {
		w = pw.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok || getenv("TERM") == "" || getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// printJSON writes v as indented JSON followed by a newline (encode.JSON,
// which the Dagger module prints too); nothing is written when v cannot be
// encoded.
func printJSON(env Env, v any) int {
	out, err := encode.JSON(v)
	if err != nil {
		return fail(env, err)
	}
	writeJSON(env.Stdout, out)
	return 0
}

// compactJSON renders v as compact JSON, as GitHub step outputs carry it.
func compactJSON(v any) string { return encode.CompactJSON(v) }

// output is one key=value step output.
type output struct{ key, value string }

// stepFlags are the flags of a subcommand that stands in for a workflow step:
// --json, and --github-output (env GITHUB_OUTPUT, as the Python steps use it)
// for the step outputs.
type stepFlags struct {
	json         *bool
	githubOutput *string
}

// addStepFlags declares --json and --github-output.
func addStepFlags(fs *flagSet) stepFlags {
	return stepFlags{
		json:         fs.Bool("json", "print the result as JSON on stdout instead of text"),
		githubOutput: fs.String("github-output", "FILE", "append the step outputs (key=value lines) to FILE", fromEnv("GITHUB_OUTPUT")),
	}
}

// emit appends the step outputs, then prints the result (JSON or text).
func (s stepFlags) emit(env Env, result any, text string, outputs []output) int {
	if err := s.writeOutputs(outputs); err != nil {
		return fail(env, err)
	}
	if *s.json {
		return printJSON(env, result)
	}
	io.WriteString(env.Stdout, ghoutput.Plain(text))
	return 0
}

// writeOutputs appends key=value lines to the --github-output file, if any.
func (s stepFlags) writeOutputs(outputs []output) error {
	path := *s.githubOutput
	if path == "" {
		return nil
	}
	var b strings.Builder
	for _, o := range outputs {
		if strings.ContainsAny(o.value, "\r\n") {
			return fmt.Errorf("step output %s holds a line break; refusing to write it to %s", o.key, path)
		}
		b.WriteString(o.key + "=" + o.value + "\n")
	}
	if err := fsinput.Append(path, b.String()); err != nil {
		return fmt.Errorf("--github-output %w; give the step's $GITHUB_OUTPUT file", err)
	}
	return nil
}

// readBody returns the PR body from --pr-body-file, else from $PR_BODY (the
// text itself, as the workflows pass it).
func readBody(fs *flagSet, path string) (string, error) {
	if !fs.Given("pr-body-file") {
		return fs.env.Getenv("PR_BODY"), nil
	}
	data, err := fsinput.ReadFile(path, fsinput.PRBody)
	if err != nil {
		return "", fmt.Errorf("--pr-body-file: %w; give the file holding the pull request description (GitHub caps one at 65536 characters)", err)
	}
	return string(data), nil
}
