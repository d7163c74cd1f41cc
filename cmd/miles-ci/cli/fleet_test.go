package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
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

// hostSession is a fleet host's fake session: its containers name the
// host, and once dead its engine answers nothing.
type hostSession struct {
	host   string
	dead   *atomic.Bool
	closed *atomic.Int32
}

type hostContainer struct {
	stagerun.Container
	host string
}

func (s hostSession) Container() stagerun.Container { return hostContainer{host: s.host} }
func (s hostSession) Close() error                  { s.closed.Add(1); return nil }
func (s hostSession) Check(context.Context) error {
	if s.dead.Load() {
		return errors.New("its engine does not answer: connection refused")
	}
	return nil
}

// TestCIFleetHostDiesMidRun: host b's engine dies under its first shard.
// b is marked down at once (its session closed while the run goes on), the
// shard that was on it and those queued go to a, the other host of their
// kind, and every shard passes: exit 0.
func TestCIFleetHostDiesMidRun(t *testing.T) {
	fakeCIEngine(t, nil)
	run := ciShardRun
	dead, closed := &atomic.Bool{}, &atomic.Int32{}
	var onB, closedWhileRunning atomic.Int32
	ciConnect = func(_ context.Context, in engine.Inputs, _ io.Writer) (ciSession, error) {
		return hostSession{host: in.RunnerHost, dead: dead, closed: closed}, nil
	}
	ciShardRun = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		if c.(hostContainer).host == "unix:///b.sock" {
			onB.Add(1)
			dead.Store(true)
			return stagerun.Result{}, stagerun.Spec{}, errors.New("reading the run's stdout: connection reset by peer")
		}
		if dead.Load() && closed.Load() > 0 {
			closedWhileRunning.Store(1)
		}
		return run(ctx, c, req, nonce, m)
	}
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts.yml")
	os.WriteFile(hosts, []byte(`
- {name: a, gpus: "none:h200:0-7", engine: "unix:///a.sock"}
- {name: b, gpus: "none:h200:0-7", engine: "unix:///b.sock"}
`), 0o644)
	results := filepath.Join(dir, "results")
	code, stdout, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--hosts", hosts, "--quiet", "--results", results, "--only", "cpu", "stage-b-2-gpu-h200", "stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-8-gpu-h200")
	if code != 0 {
		t.Fatalf("wanted exit 0 (every shard passed on a), got %d\n%s\n%s", code, stdout, stderr)
	}
	if onB.Load() == 0 {
		t.Fatalf("no shard was placed on b: the test proves nothing\n%s", stdout)
	}
	data, _ := os.ReadFile(filepath.Join(results, "summary.json"))
	var sum struct {
		Jobs []cirun.JobReport `json:"jobs"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, j := range sum.Jobs {
		if j.Kind != cirun.KindStage || j.State == cirun.Skipped || j.State == cirun.Excluded {
			continue
		}
		ran++
		if j.State != cirun.Passed || j.Host != "a" {
			t.Errorf("%s: wanted passed on a, got %s on %q: %s", j.Key, j.State, j.Host, j.Reason)
		}
	}
	if ran == 0 {
		t.Errorf("no stage shard ran\n%s", stdout)
	}
	if closedWhileRunning.Load() == 0 {
		t.Errorf("b's session was not closed while the run went on (closed %d times)", closed.Load())
	}
}

// TestCIEngineLogOnlyForTheEngine: a run whose only not-run shards want
// GPUs the host lacks does not point at the engine's log; one whose shard
// the engine refused does.
func TestCIEngineLogOnlyForTheEngine(t *testing.T) {
	fakeCIEngine(t, nil)
	log := filepath.Join(t.TempDir(), "engine.log")
	ci := func(stage string) (int, string) {
		code, _, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
			"--gpus", "none:h200:0-3", "--engine-log", log, "--results", filepath.Join(t.TempDir(), "results"), "--only", stage)
		return code, stderr
	}
	const pointer = "the engine's log may say why"
	if code, stderr := ci("stage-c-8-gpu-h200"); code != 125 || strings.Contains(stderr, pointer) {
		t.Errorf("8-GPU shards on a 4-GPU host: wanted exit 125 and no pointer at the engine's log, got %d\n%s", code, stderr)
	}
	ciShardRun = func(context.Context, stagerun.Container, stagerun.Request, string, *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		return stagerun.Result{}, stagerun.Spec{}, errors.New("the engine refused the container")
	}
	if code, stderr := ci("stage-c-2-gpu-h200"); code != 125 || !strings.Contains(stderr, pointer) {
		t.Errorf("a shard the engine refused: wanted exit 125 and the pointer at the engine's log, got %d\n%s", code, stderr)
	}
}
