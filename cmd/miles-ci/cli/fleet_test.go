package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
)

// fakeDaggerCLI puts a dagger CLI that runs script (sh) where the engine
// adapter finds it (_EXPERIMENTAL_DAGGER_CLI_BIN).
func fakeDaggerCLI(t *testing.T, script string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dagger")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("_EXPERIMENTAL_DAGGER_CLI_BIN", bin)
	t.Setenv("DAGGER_SESSION_PORT", "")
	os.Unsetenv("DAGGER_SESSION_PORT")
	return bin
}

// TestCIFleetHostFailsFast: a host whose engine fails at once (its dagger
// session exits naming no such engine) is down; the real adapter's failed
// connection is closed with the fleet without a panic, and the exit is the
// verdict's: the other host's shards passed, the down host's are not-run
// naming it (rules §14), 125.
func TestCIFleetHostFailsFast(t *testing.T) {
	fakeCIEngine(t, nil)
	fakeDaggerCLI(t, `echo "Error: no such engine container: $_EXPERIMENTAL_DAGGER_RUNNER_HOST" >&2; exit 1`)
	fake := ciConnect
	ciConnect = func(ctx context.Context, in engine.Inputs, log io.Writer) (ciSession, error) {
		if in.RunnerHost == "docker-container://no-such-engine" {
			return engine.Connect(ctx, in, log) // the real adapter, on the fake CLI
		}
		return fake(ctx, in, log)
	}
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts.yml")
	os.WriteFile(hosts, []byte(`
- {name: a, gpus: "none:h200:0-7"}
- {name: b, gpus: "none:mi350:0-3", engine: "docker-container://no-such-engine", cpu: false}
`), 0o644)
	code, stdout, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--hosts", hosts, "--quiet", "--results", filepath.Join(dir, "results"))
	if code != 125 {
		t.Fatalf("wanted exit 125 (the MI350 shards' only host is down), got %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"(down: host b: connecting to a Dagger engine: the dagger session ended before it connected (exit status 1): Error: no such engine container: docker-container://no-such-engine;"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("wanted %q in the output, got\n%s", want, stdout)
		}
	}
}
