package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The oracle (testdata/oracle/run_suite_oracle.py) is an independent Python
// implementation of rules §2-§5 built on CPython's ast. These tests run the
// plan and policy commands on testdata/miles and compare their stdout with the
// oracle's, byte for byte.

const oraclePython = "/usr/bin/python3"

// oracleCase is one invocation: the same flags go to miles-ci and the oracle.
type oracleCase struct {
	name   string
	goArgs []string // after the command name and --repo
	orArgs []string // after --repo
	policy bool
}

// oracleResult is what the oracle's --batch mode prints per case.
type oracleResult struct {
	Code   int    `json:"code"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// shardCounts are the stage shard counts of rules §1; 0 means the external
// nightly suites, which are planned whole.
var shardCounts = []struct {
	hw, suite string
	shards    int
}{
	{"cpu", "stage-a-cpu", 4},
	{"cpu", "stage-b-cpu", 1},
	{"cuda", "stage-b-2-gpu-h200", 1},
	{"cuda", "stage-c-2-gpu-h200", 2},
	{"cuda", "stage-c-4-gpu-h200", 3},
	{"cuda", "stage-c-8-gpu-h100", 2},
	{"cuda", "stage-c-8-gpu-h200", 2},
	{"rocm", "stage-c-4-gpu-mi350", 2},
	{"rocm", "nightly-stage-c-2-gpu-mi350", 0},
	{"rocm", "nightly-stage-c-4-gpu-mi350", 0},
	{"rocm", "nightly-stage-c-8-gpu-mi350", 0},
}

func planCases() []oracleCase {
	labelSets := []struct {
		name     string
		labels   []string
		matchAll bool
	}{
		{"none", nil, false},
		{"megatron", []string{"run-ci-megatron"}, false},
		{"amd+sglang", []string{"run-ci-amd", "run-ci-sglang"}, false},
		{"all", []string{"run-ci-all"}, false},
		{"image", []string{"run-ci-image"}, false},
		{"bypass", []string{"bypass-fastfail"}, false},
		{"match-all", nil, true},
		{"megatron+match-all", []string{"run-ci-megatron"}, true},
		{"nightly-label", []string{"nightly", "run-ci-fsdp"}, false},
	}
	var cases []oracleCase
	for _, st := range shardCounts {
		parts := [][]string{nil}
		for i := 0; i < st.shards; i++ {
			parts = append(parts, []string{"--auto-partition-id", fmt.Sprint(i), "--auto-partition-size", fmt.Sprint(st.shards)})
		}
		for _, cadence := range []string{"regular", "nightly", "weekly", "release"} {
			for _, ls := range labelSets {
				for _, part := range parts {
					args := []string{"--hw", st.hw, "--suite", st.suite, "--cadence", cadence, "--labels"}
					args = append(args, ls.labels...)
					if ls.matchAll {
						args = append(args, "--match-all-labels")
					}
					args = append(args, part...)
					name := fmt.Sprintf("%s/%s/%s/full", st.suite, cadence, ls.name)
					if part != nil {
						name = fmt.Sprintf("%s/%s/%s/%s-of-%d", st.suite, cadence, ls.name, part[1], st.shards)
					}
					cases = append(cases, oracleCase{name: name, goArgs: args, orArgs: args})
				}
			}
		}
	}
	extra := [][]string{
		{"--hw", "cpu", "--suite", "stage-a-cpu", "--continue-on-error", "--auto-partition-id", "2", "--auto-partition-size", "4"},
		{"--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--continue-on-error", "--labels", "run-ci-fsdp", "run-ci-ckpt"},
		{"--hw", "cuda", "--suite", "stage-c-2-gpu-h200", "--labels", "run-ci-lora", "run-ci-replay", "documentation", "run-ci-bogus"},
		{"--hw", "rocm", "--suite", "stage-c-4-gpu-mi350", "--cadence", "nightly", "--labels", "run-ci-amd", "--auto-partition-id", "1", "--auto-partition-size", "3"},
		{"--hw", "cuda", "--suite", "stage-c-8-gpu-h100", "--cadence", "release", "--auto-partition-id", "3", "--auto-partition-size", "5"},
		// errors: partition out of range, id without size, unknown suite, unknown cadence
		{"--hw", "cpu", "--suite", "stage-a-cpu", "--auto-partition-id", "4", "--auto-partition-size", "4"},
		{"--hw", "cpu", "--suite", "stage-a-cpu", "--auto-partition-id", "0"},
		{"--hw", "cuda", "--suite", "stage-a-cpu"},
		{"--hw", "rocm", "--suite", "stage-c-4-gpu-h200"},
		{"--hw", "cpu", "--suite", "stage-a-cpu", "--cadence", "hourly"},
	}
	for i, args := range extra {
		cases = append(cases, oracleCase{name: fmt.Sprintf("extra-%d", i), goArgs: args, orArgs: args})
	}
	return cases
}

func policyCases(t *testing.T, repo string) []oracleCase {
	diffs, err := filepath.Glob(filepath.Join(repo, "diffs", "*.z"))
	if err != nil || len(diffs) == 0 {
		t.Fatalf("no diffs under %s/diffs: %v", repo, err)
	}
	diffs = append(diffs, filepath.Join(repo, "diffs", "does-not-exist.z"), "")
	labelSets := []string{
		`[]`,
		`["run-ci-megatron"]`,
		`["run-ci-amd","run-ci-sglang"]`,
		`["run-ci-all"]`,
		`["run-ci-image"]`,
		`["nightly"]`,
		`["bypass-fastfail"]`,
		`["nightly","run-ci-fsdp"]`,
		`["run-ci-ft-long","run-ci-long"]`,
		`["run-ci-lora"]`,
		`["documentation","run-ci-bogus","run-ci-","run-ci-x y","run-ci-megatron","run-ci-megatron","Run-CI-fsdp"]`,
	}
	var cases []oracleCase
	for _, labels := range labelSets {
		for _, d := range diffs {
			args := []string{"--event", "pull_request", "--pr-labels-json", labels}
			name := "pr/" + labels + "/no-diff-flag"
			if d != "" {
				args = append(args, "--changed-files", d)
				name = "pr/" + labels + "/" + filepath.Base(d)
			}
			cases = append(cases, oracleCase{name: name, goArgs: args, orArgs: args, policy: true})
		}
	}
	other := [][]string{
		{"--event", "schedule", "--schedule", "0 15 * * 0-5"},
		{"--event", "schedule", "--schedule", "0 15 * * 6"},
		{"--event", "workflow_dispatch"},
		{"--event", "workflow_dispatch", "--cadence-override", "release"},
		{"--event", "schedule", "--schedule", "0 15 * * 6", "--cadence-override", "nightly"},
		{"--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--cadence-override", "weekly",
			"--changed-files", filepath.Join(repo, "diffs", "cuda_test.z")},
		// errors
		{"--event", "schedule", "--schedule", "0 16 * * 0-5"},
		{"--event", "schedule"},
		{"--event", "push"},
		{"--event", "pull_request", "--pr-labels-json", `not json`},
		{"--event", "pull_request", "--pr-labels-json", `{"labels":["run-ci-all"]}`},
		{"--event", "pull_request", "--pr-labels-json", `["run-ci-all",1]`},
		{"--event", "workflow_dispatch", "--cadence-override", "hourly"},
	}
	for i, args := range other {
		cases = append(cases, oracleCase{name: fmt.Sprintf("other-%d", i), goArgs: args, orArgs: args, policy: true})
	}
	return cases
}

// runOracle runs every case through the oracle in one Python process.
func runOracle(t *testing.T, repo string, cases []oracleCase) []oracleResult {
	t.Helper()
	batch := make([][]string, len(cases))
	for i, c := range cases {
		argv := []string{"--repo", repo}
		if c.policy {
			argv = append([]string{"--policy"}, argv...)
		}
		batch[i] = append(argv, c.orArgs...)
	}
	in, err := json.Marshal(batch)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(oraclePython, filepath.Join("..", "..", "testdata", "oracle", "run_suite_oracle.py"), "--batch")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle failed: %v\n%s", err, stderr.String())
	}
	var res []oracleResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("oracle output: %v", err)
	}
	if len(res) != len(cases) {
		t.Fatalf("oracle answered %d cases, wanted %d", len(res), len(cases))
	}
	return res
}

func runCLI(args []string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Run(args, Env{Stdout: &stdout, Stderr: &stderr})
	return code, stdout.String(), stderr.String()
}

func testdataRepo(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(oraclePython); err != nil {
		t.Skipf("%s not found: %v", oraclePython, err)
	}
	repo, err := filepath.Abs(filepath.Join("..", "..", "testdata", "miles"))
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func compareWithOracle(t *testing.T, cmdName, repo string, cases []oracleCase, normalize func(string) string) {
	t.Helper()
	start := time.Now()
	want := runOracle(t, repo, cases)
	t.Logf("oracle: %d cases in %v", len(cases), time.Since(start))
	for i, c := range cases {
		w := want[i]
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{cmdName, "--repo", repo}, c.goArgs...)
			if cmdName == "policy" {
				args = append([]string{cmdName, "--json", "--repo", repo}, c.goArgs...)
			}
			code, got, stderr := runCLI(args)
			if (w.Code == 0) != (code == 0) {
				t.Fatalf("miles-ci %s: exit code %d, oracle %d\nmiles-ci stdout:\n%s\nmiles-ci stderr:\n%s\noracle stderr:\n%s",
					strings.Join(c.goArgs, " "), code, w.Code, got, stderr, w.Stderr)
			}
			if code != 0 {
				return
			}
			if normalize != nil {
				got = normalize(got)
			}
			if got != w.Stdout {
				t.Errorf("miles-ci %s %s:\nwanted (oracle):\n%s\ngot:\n%s", cmdName, strings.Join(c.goArgs, " "), w.Stdout, got)
			}
		})
	}
}

func TestPlanMatchesOracle(t *testing.T) {
	repo := testdataRepo(t)
	compareWithOracle(t, "plan", repo, planCases(), nil)
}

func TestPolicyMatchesOracle(t *testing.T) {
	repo := testdataRepo(t)
	compareWithOracle(t, "policy", repo, policyCases(t, repo), func(s string) string {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(s)); err != nil {
			return "invalid JSON: " + s
		}
		return b.String() + "\n"
	})
}
