// Miles CI as a Dagger module: what the Miles GitHub Actions pipeline runs, where,
// and why. Every function runs one miles-ci CLI invocation in-process, so
// `dagger call plan ...` prints exactly what `miles-ci plan ... --json` prints.
//
// This file only turns Dagger arguments into a CLI argv; all planning logic lives
// in the policy packages behind internal/cli.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/internal/cli"
	"github.com/radixark/miles-ci/internal/dagger"
)

// MilesCi answers what Miles CI runs where, as the miles-ci command does.
type MilesCi struct{}

// Stages returns the stage roster as JSON: backend, runners, shards, parallelism,
// needs and image of every CI stage (`miles-ci stages --json`).
func (m *MilesCi) Stages(ctx context.Context) (string, error) {
	return runCLI(ctx, "stages", "--json")
}

// Plan returns, as JSON, what one suite shard runs, as run_suite.py --list-only
// shows it (`miles-ci plan --repo DIR ... --json`).
func (m *MilesCi) Plan(
	ctx context.Context,
	// The Miles checkout to plan for (its tests/ registry decides the plan).
	// +defaultPath="/"
	source *dagger.Directory,
	// Hardware backend: cpu, cuda or rocm.
	hw string,
	// Suite (= stage) name, e.g. stage-a-cpu.
	suite string,
	// CI cadence: regular (the default), nightly, weekly or release.
	// +optional
	cadence string,
	// Raw PR labels, e.g. run-ci-megatron.
	// +optional
	labels []string,
	// Include every known label, as a manual dispatch of a GPU stage does.
	// +optional
	matchAllLabels bool,
	// 0-based shard index; give it together with partitionSize (absent: not partitioned).
	// +optional
	partitionId *int,
	// Number of shards; give it together with partitionId (absent: not partitioned).
	// +optional
	partitionSize *int,
	// Keep running after a failed test.
	// +optional
	continueOnError bool,
) (string, error) {
	dir, cleanup, err := exportDir(ctx, source)
	if err != nil {
		return "", err
	}
	defer cleanup()
	return runCLI(ctx, planArgs(dir, hw, suite, cadence, labels, matchAllLabels, partitionId, partitionSize, continueOnError)...)
}

// Policy resolves cadence, labels, fast-fail and the skipped GPU stages from the
// trigger facts, as JSON (`miles-ci policy --event E ... --json`).
func (m *MilesCi) Policy(
	ctx context.Context,
	// GitHub event: pull_request, schedule or workflow_dispatch.
	event string,
	// Cron expression of a scheduled run.
	// +optional
	schedule string,
	// The PR's label names as a JSON array, e.g. ["run-ci-megatron"].
	// +optional
	prLabelsJson string,
	// A called workflow's cadence input; it wins over the event.
	// +optional
	cadenceOverride string,
	// Output of `git diff --name-status -z -M HEAD^1 HEAD` for a pull request.
	// +optional
	changedFiles *dagger.File,
	// The Miles checkout whose test registry decides the GPU stages.
	// +defaultPath="/"
	source *dagger.Directory,
) (string, error) {
	dir, cleanup, err := exportDir(ctx, source)
	if err != nil {
		return "", err
	}
	defer cleanup()
	changedPath := ""
	if changedFiles != nil {
		changedPath = dir + ".changed-files"
		if _, err := changedFiles.Export(ctx, changedPath); err != nil {
			return "", fmt.Errorf("export changed-files: %w", err)
		}
		defer os.Remove(changedPath)
	}
	return runCLI(ctx, policyArgs(dir, event, schedule, prLabelsJson, cadenceOverride, changedPath)...)
}

// planArgs builds the argv of `miles-ci plan`.
func planArgs(dir, hw, suite, cadence string, labels []string, matchAll bool, partitionID, partitionSize *int, continueOnError bool) []string {
	args := []string{"plan", "--repo", dir, "--hw", hw, "--suite", suite}
	if cadence != "" {
		args = append(args, "--cadence", cadence)
	}
	if len(labels) > 0 {
		args = append(append(args, "--labels"), labels...)
	}
	if matchAll {
		args = append(args, "--match-all-labels")
	}
	if partitionID != nil {
		args = append(args, "--auto-partition-id", strconv.Itoa(*partitionID))
	}
	if partitionSize != nil {
		args = append(args, "--auto-partition-size", strconv.Itoa(*partitionSize))
	}
	if continueOnError {
		args = append(args, "--continue-on-error")
	}
	return append(args, "--json")
}

// policyArgs builds the argv of `miles-ci policy`; empty values are left out.
func policyArgs(dir, event, schedule, prLabelsJSON, cadenceOverride, changedFiles string) []string {
	args := []string{"policy", "--event", event, "--repo", dir}
	for _, f := range []struct{ flag, value string }{
		{"--schedule", schedule},
		{"--pr-labels-json", prLabelsJSON},
		{"--cadence-override", cadenceOverride},
		{"--changed-files", changedFiles},
	} {
		if f.value != "" {
			args = append(args, f.flag, f.value)
		}
	}
	return append(args, "--json")
}

// exportDir writes source to a fresh folder of the module runtime, so the CLI reads a
// real directory; cleanup removes it.
func exportDir(ctx context.Context, source *dagger.Directory) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "miles-ci-source-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	if _, err := source.Export(ctx, tmp); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("export source directory: %w", err)
	}
	if err := cli.CheckSource(tmp); err != nil {
		cleanup()
		return "", nil, err
	}
	return tmp, cleanup, nil
}

// runCLI runs one miles-ci invocation and returns its stdout; a non-zero exit becomes
// an error carrying stderr. The environment is not consulted: every input is an
// argument, so a call gives the same answer wherever it runs.
func runCLI(_ context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	code := cli.Run(args, cli.Env{
		Stdout: &stdout,
		Stderr: &stderr,
		Getenv: func(string) string { return "" },
	})
	if code != 0 {
		return "", fmt.Errorf("miles-ci %s: exit status %d: %s", args[0], code, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
