package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	repo   string // when set, this case's repository instead of the batch's
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
		r := repo
		if c.repo != "" {
			r = c.repo
		}
		argv := []string{"--repo", r}
		if c.policy {
			argv = append([]string{"--policy"}, argv...)
		}
		batch[i] = append(argv, c.orArgs...)
	}
	in, err := json.Marshal(batch)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(oraclePython, filepath.Join("..", "..", "..", "testdata", "oracle", "run_suite_oracle.py"), "--batch")
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

func runArgs(args []string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Run(args, Env{Stdout: &stdout, Stderr: &stderr})
	return code, stdout.String(), dropNotices(stderr.String())
}

func testdataRepo(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(oraclePython); err != nil {
		t.Skipf("%s not found: %v", oraclePython, err)
	}
	repo, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "miles"))
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
			code, got, stderr := runArgs(args)
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
		return withoutSelection(b.String()) + "\n"
	})
}

// selectionKeys are the keys policy --json adds to ci_policy's outputs on a
// pull request: the stages the text's runnable and affected lines name
// (runnable left out where an unusable diff leaves it unknown).
var selectionKeys = regexp.MustCompile(`(,"runnable":\[[^\]]*\])?,"affected":\[[^\]]*\]\}$`)

// withoutSelection is compact policy JSON without selectionKeys, as the
// checkout's ci_policy writes it.
func withoutSelection(s string) string { return selectionKeys.ReplaceAllString(s, "}") }

// registryCases are one-file repositories for the rules of §2: the valid ones
// must plan the same, the invalid ones must fail in both.
var registryCases = []struct {
	name, path, src, hw, suite string
}{
	{"cuda-all-keywords", "tests/e2e/test_x.py", `register_cuda_ci(est_time=1, suite="stage-c-2-gpu-h200", labels=["amd"], disabled=None, nightly=False)`, "cuda", "stage-c-2-gpu-h200"},
	{"hex-and-exp-est-time", "tests/e2e/test_x.py", "register_cuda_ci(est_time=0x10, suite=\"stage-c-2-gpu-h200\", labels=[\"fsdp\"])\nregister_cuda_ci(1e3, \"stage-c-2-gpu-h200\", labels=[\"fsdp\"],)", "cuda", "stage-c-2-gpu-h200"},
	{"est-time-inf", "tests/e2e/test_x.py", "register_cuda_ci(est_time=1e400, suite=\"stage-c-2-gpu-h200\", labels=[\"fsdp\"])\nregister_cuda_ci(est_time=5, suite=\"stage-c-2-gpu-h200\", labels=[\"fsdp\"])", "cuda", "stage-c-2-gpu-h200"},
	{"cpu-labels-none", "tests/ci/test_x.py", `register_cpu_ci(est_time=3, suite="stage-b-cpu", labels=None)`, "cpu", "stage-b-cpu"},
	{"cpu-labels-empty-list", "tests/fast-gpu/test_x.py", `register_cpu_ci(est_time=3, suite="stage-b-cpu", labels=[])`, "cpu", "stage-b-cpu"},
	{"fast-mentions-rocm-only", "tests/fast/test_x.py", "# register_rocm_ci(est_time=1)\ndef test_x():\n    pass", "cpu", "stage-a-cpu"},
	{"fast-nested-dir-implicit", "tests/fast/a/b/test_x.py", "import os", "cpu", "stage-a-cpu"},
	{"hidden-dir-ignored", "tests/fast/.cache/test_x.py", "this is not python (", "cpu", "stage-a-cpu"},
	{"not-test-prefix-ignored", "tests/e2e/x_test.py", "import os", "cpu", "stage-a-cpu"},
	{"outside-roots-ignored", "tests/other/test_x.py", "import os", "cpu", "stage-a-cpu"},
	{"err-fast-gpu-is-not-fast", "tests/fast-gpu/test_x.py", "import os", "cpu", "stage-a-cpu"},
	{"err-no-registry-e2e", "tests/e2e/test_x.py", "def test_x():\n    register_cuda_ci(est_time=1, suite=\"stage-c-2-gpu-h200\", labels=[\"fsdp\"])", "cpu", "stage-a-cpu"},
	{"err-fast-mentions-cuda", "tests/fast/test_x.py", "# register_cuda_ci(est_time=1)\nimport os", "cpu", "stage-a-cpu"},
	{"err-fast-nested-cpu", "tests/fast/test_x.py", "if True:\n    register_cpu_ci(est_time=1, suite=\"stage-a-cpu\")", "cpu", "stage-a-cpu"},
	{"err-fast-cuda", "tests/fast/test_x.py", `register_cuda_ci(est_time=1, suite="stage-c-2-gpu-h200", labels=["fsdp"])`, "cpu", "stage-a-cpu"},
	{"err-fast-rocm", "tests/fast/test_x.py", `register_rocm_ci(est_time=1, suite="stage-c-4-gpu-mi350", labels=["amd"])`, "cpu", "stage-a-cpu"},
	{"err-negative", "tests/ci/test_x.py", `register_cpu_ci(est_time=-5, suite="stage-a-cpu")`, "cpu", "stage-a-cpu"},
	{"err-unary-plus", "tests/ci/test_x.py", `register_cpu_ci(est_time=+5, suite="stage-a-cpu")`, "cpu", "stage-a-cpu"},
	{"err-product", "tests/ci/test_x.py", `register_cpu_ci(est_time=60*10, suite="stage-a-cpu")`, "cpu", "stage-a-cpu"},
	{"err-est-time-string", "tests/ci/test_x.py", `register_cpu_ci(est_time="10", suite="stage-a-cpu")`, "cpu", "stage-a-cpu"},
	{"err-est-time-none", "tests/ci/test_x.py", `register_cpu_ci(est_time=None, suite="stage-a-cpu")`, "cpu", "stage-a-cpu"},
	{"err-three-positional", "tests/ci/test_x.py", `register_cpu_ci(1, "stage-a-cpu", None)`, "cpu", "stage-a-cpu"},
	{"err-starred", "tests/ci/test_x.py", `register_cpu_ci(*ARGS)`, "cpu", "stage-a-cpu"},
	{"err-kwargs", "tests/ci/test_x.py", `register_cpu_ci(est_time=1, **KW)`, "cpu", "stage-a-cpu"},
	{"err-unknown-keyword", "tests/ci/test_x.py", `register_cpu_ci(est_time=1, suite="stage-a-cpu", timeout=5)`, "cpu", "stage-a-cpu"},
	{"err-repeated-keyword", "tests/ci/test_x.py", `register_cpu_ci(est_time=1, est_time=2, suite="stage-a-cpu")`, "cpu", "stage-a-cpu"},
	{"err-positional-and-keyword", "tests/ci/test_x.py", `register_cpu_ci(1, est_time=2, suite="stage-a-cpu")`, "cpu", "stage-a-cpu"},
	{"err-missing-est-time", "tests/ci/test_x.py", `register_cpu_ci(suite="stage-a-cpu")`, "cpu", "stage-a-cpu"},
	{"err-missing-suite", "tests/ci/test_x.py", `register_cpu_ci(est_time=1)`, "cpu", "stage-a-cpu"},
	{"err-suite-none", "tests/ci/test_x.py", `register_cpu_ci(est_time=1, suite=None)`, "cpu", "stage-a-cpu"},
	{"err-suite-fstring", "tests/ci/test_x.py", `register_cpu_ci(est_time=1, suite=f"stage-a-cpu")`, "cpu", "stage-a-cpu"},
	{"err-labels-tuple", "tests/e2e/test_x.py", `register_cuda_ci(est_time=1, suite="stage-c-2-gpu-h200", labels=("fsdp",))`, "cpu", "stage-a-cpu"},
	{"err-labels-string", "tests/e2e/test_x.py", `register_cuda_ci(est_time=1, suite="stage-c-2-gpu-h200", labels="fsdp")`, "cpu", "stage-a-cpu"},
	{"err-labels-name", "tests/e2e/test_x.py", `register_cuda_ci(est_time=1, suite="stage-c-2-gpu-h200", labels=["fsdp", FSDP])`, "cpu", "stage-a-cpu"},
	{"err-labels-int", "tests/e2e/test_x.py", `register_cuda_ci(est_time=1, suite="stage-c-2-gpu-h200", labels=["fsdp", 1])`, "cpu", "stage-a-cpu"},
	{"err-unknown-label", "tests/e2e/test_x.py", `register_cuda_ci(est_time=1, suite="stage-c-2-gpu-h200", labels=["fsdp", "gpu"])`, "cpu", "stage-a-cpu"},
	{"err-cuda-no-labels", "tests/e2e/test_x.py", `register_cuda_ci(est_time=1, suite="stage-c-2-gpu-h200")`, "cpu", "stage-a-cpu"},
	{"err-cuda-labels-empty", "tests/e2e/test_x.py", `register_cuda_ci(est_time=1, suite="stage-c-2-gpu-h200", labels=[])`, "cpu", "stage-a-cpu"},
	{"err-rocm-labels-none", "tests/e2e/test_x.py", `register_rocm_ci(est_time=1, suite="stage-c-4-gpu-mi350", labels=None)`, "cpu", "stage-a-cpu"},
	{"err-nightly-int", "tests/ci/test_x.py", `register_cpu_ci(est_time=1, suite="stage-a-cpu", nightly=1)`, "cpu", "stage-a-cpu"},
	{"err-disabled-bool", "tests/ci/test_x.py", `register_cpu_ci(est_time=1, suite="stage-a-cpu", disabled=True)`, "cpu", "stage-a-cpu"},
	{"err-invalid-python", "tests/ci/test_x.py", "register_cpu_ci(est_time=1, suite=\"stage-a-cpu\"\n", "cpu", "stage-a-cpu"},
}

func TestRegistryRulesMatchOracle(t *testing.T) {
	testdataRepo(t) // skips without python
	dirs := make([]string, len(registryCases))
	cases := make([]oracleCase, len(registryCases))
	for i, rc := range registryCases {
		dir := t.TempDir()
		p := filepath.Join(dir, filepath.FromSlash(rc.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rc.src+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs[i] = dir
		args := []string{"--hw", rc.hw, "--suite", rc.suite, "--cadence", "weekly"}
		cases[i] = oracleCase{name: rc.name, goArgs: args, orArgs: args, repo: dir}
	}
	wants := runOracle(t, "", cases)
	for i, c := range cases {
		want := wants[i]
		t.Run(c.name, func(t *testing.T) {
			code, got, stderr := runArgs(append([]string{"plan", "--repo", dirs[i]}, c.goArgs...))
			if (want.Code == 0) != (code == 0) {
				t.Fatalf("%s: miles-ci exit code %d, oracle %d\nmiles-ci stdout:\n%s\nmiles-ci stderr:\n%s\noracle stderr:\n%s",
					registryCases[i].src, code, want.Code, got, stderr, want.Stderr)
			}
			if code == 0 && got != want.Stdout {
				t.Errorf("%s:\nwanted (oracle):\n%s\ngot:\n%s", registryCases[i].src, want.Stdout, got)
			}
			if strings.HasPrefix(c.name, "err-") != (code != 0) {
				t.Errorf("%s: wanted an error %t, miles-ci exit code %d", c.name, strings.HasPrefix(c.name, "err-"), code)
			}
		})
	}
}
