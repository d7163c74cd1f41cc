package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/radixark/miles-ci/actions"
)

// fail prints an error the way GitHub Actions annotates it (a registry error
// on its test file and line) and returns exit code 1.
func fail(env Env, err error) int {
	io.WriteString(env.Stderr, actions.ErrorAnnotations(err))
	return 1
}

// warn prints a warning annotation.
func warn(env Env, msg string) {
	fmt.Fprintf(env.Stderr, "::warning::%s\n", msg)
}

// printJSON writes v as indented JSON followed by a newline.
func printJSON(env Env, v any) int {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fail(env, fmt.Errorf("encoding JSON: %w", err))
	}
	return 0
}

// compactJSON renders v as compact JSON, as GitHub step outputs carry it.
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// appendGitHubOutput appends key=value lines to a GITHUB_OUTPUT file.
func appendGitHubOutput(path string, lines []string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("opening --github-output %s: %w", path, err)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("writing --github-output %s: %w", path, err)
	}
	return f.Close()
}

// notice prints a notice annotation: information, not a fault.
func notice(env Env, msg string) {
	fmt.Fprintf(env.Stderr, "::notice::%s\n", msg)
}
