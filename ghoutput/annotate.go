// Package ghoutput renders miles-ci's answers the way GitHub Actions shows
// them: workflow-command annotations (::error file=...,line=...::) and the
// Markdown of a job's step summary, including the results of a test run read
// from its summary.json. It is pure: it returns strings and appends to files
// the caller names.
package ghoutput

import (
	"errors"
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// escapeData escapes an annotation message as the runner reads it back.
var escapeData = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// escapeProperty escapes an annotation property (file=, title=), which may
// not hold the separators ',' and ':' either.
var escapeProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

// Annotation formats one workflow command: level is error, warning or
// notice; file and line are left out when empty or 0.
func Annotation(level, file string, line int, msg string) string {
	var props []string
	if file != "" {
		props = append(props, "file="+escapeProperty.Replace(file))
		if line > 0 {
			props = append(props, fmt.Sprintf("line=%d", line))
		}
	}
	head := "::" + level
	if len(props) > 0 {
		head += " " + strings.Join(props, ",")
	}
	// The runner's older command form, ##[name ...], counts anywhere in a
	// line, so a message's own is broken as Plain breaks it.
	return head + "::" + escapeData.Replace(strings.ReplaceAll(report.EscapeControls(msg), "##[", `##\[`)) + "\n"
}

// ErrorAnnotations formats err as error annotations. A registry error points
// at its test file and line, so GitHub shows it on the file in the PR diff;
// any other error gives one plain annotation per line of its message.
func ErrorAnnotations(err error) string {
	var re *policy.RegistryError
	if errors.As(err, &re) {
		return Annotation("error", re.File, re.Line, err.Error())
	}
	var ae *policy.AheadError
	if errors.As(err, &ae) {
		return Annotation("error", ae.File, ae.Line, err.Error())
	}
	return Annotations("error", err.Error())
}

// Annotations formats msg as plain annotations of level, one per line: a
// workflow command ends at its line, so each line of a longer message is one.
func Annotations(level, msg string) string {
	var b strings.Builder
	for _, line := range strings.Split(msg, "\n") {
		b.WriteString(Annotation(level, "", 0, line))
	}
	return b.String()
}

// AppendStepSummary appends Markdown to the step-summary file at path
// (GITHUB_STEP_SUMMARY), creating it when missing; a FIFO that nothing reads
// fails at once (fsinput.Append).
func AppendStepSummary(path, markdown string) error {
	if err := fsinput.Append(path, markdown); err != nil {
		return fmt.Errorf("--github-step-summary %w; give the step's $GITHUB_STEP_SUMMARY file", err)
	}
	return nil
}
