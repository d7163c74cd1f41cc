package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// Variant trees: testdata/miles with one table row changed in its own files,
// as a Miles PR would change it. miles-ci must give what Miles' code gives
// for that tree: the oracle, handed the tables derived by hand from the
// variant (never from miles-ci's reader), is the reference.

// copyTree copies a folder into a fresh temporary one.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	testfiles.CopyTree(t, src, dst)
	return dst
}

// edit replaces old by new in a file of the tree; old must occur.
func edit(t *testing.T, root, rel, old, new string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTablesJSON writes the oracle's --tables file.
func writeTablesJSON(t *testing.T, tables map[string]any) string {
	t.Helper()
	data, err := json.Marshal(tables)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tables.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runSuiteWithSuites is a run_suite.py that declares CI_SUITES the way Miles
// writes it: enum keys, a comment per backend; extra are more CUDA suites.
func runSuiteWithSuites(extra ...string) string {
	var b strings.Builder
	b.WriteString("import argparse\n\nfrom tests.ci.ci_register import HWBackend\n\n")
	b.WriteString("CI_SUITES = {\n    HWBackend.CPU: [\n        \"stage-a-cpu\",\n        \"stage-b-cpu\",\n    ],\n")
	b.WriteString("    HWBackend.CUDA: [\n")
	for _, s := range append([]string{"stage-b-2-gpu-h200", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200", "stage-c-4-gpu-h200", "stage-c-2-gpu-h200"}, extra...) {
		fmt.Fprintf(&b, "        %q,\n", s)
	}
	b.WriteString("    ],\n    HWBackend.ROCM: [\n        # run by pr-test-rocm.yml\n        \"stage-c-4-gpu-mi350\",\n")
	b.WriteString("        # run by the external MI350 nightly\n        \"nightly-stage-c-8-gpu-mi350\",\n        \"nightly-stage-c-4-gpu-mi350\",\n        \"nightly-stage-c-2-gpu-mi350\",\n    ],\n}\n\n\ndef main():\n    pass\n")
	return b.String()
}

// stageJob is a CUDA stage job in the style of testdata/miles' pr-test.yml.
func stageJob(name, runsOn string, shards int) string {
	ids := make([]string, shards)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	return fmt.Sprintf(`
  %[1]s:
    needs: [policy, image, stage-a-cpu]
    if: |
      always() && !cancelled() &&
      !contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), '%[1]s') &&
      (needs.stage-a-cpu.result == 'success' || needs.policy.outputs.bypass_fastfail == 'true')
    strategy:
      fail-fast: false
      max-parallel: ${{ needs.policy.outputs.cadence == 'weekly' && 1 || %[3]d }}
      matrix:
        partition_id: [%[4]s]
    uses: ./.github/workflows/_run-ci.yml
    with:
      runs_on: '%[2]s'
      container_image: ${{ needs.image.outputs.container_image }}
      execute_command: >-
        python tests/ci/run_suite.py --hw cuda --suite %[1]s
        --auto-partition-id ${{ matrix.partition_id }} --auto-partition-size ${{ strategy.job-total }}
        --cadence ${{ needs.policy.outputs.cadence }}
        --labels ${{ needs.policy.outputs.raw_labels }}
`, name, runsOn, shards, strings.Join(ids, ", "))
}

type variant struct {
	name string
	// change edits a copy of testdata/miles.
	change func(t *testing.T, root string)
	// tables are the variant's tables, derived by hand from what change wrote.
	tables map[string]any
	// cases are run through miles-ci and the oracle (plan unless policy).
	plans    [][]string
	policies [][]string
	// shards are the stage shard counts of the variant's roster (rules §1
	// order), derived by hand; plan --all must plan exactly these.
	shards []struct {
		hw, suite string
		shards    int
	}
}

func variants() []variant {
	labels := append(slices.Clone(policy.KnownLabels), "deploy")
	withShards := func(suite string, n int) []struct {
		hw, suite string
		shards    int
	} {
		out := slices.Clone(shardCounts)
		for i := range out {
			if out[i].suite == suite {
				out[i].shards = n
			}
		}
		return out
	}
	return []variant{
		{
			name: "new-label",
			change: func(t *testing.T, root string) {
				edit(t, root, "tests/ci/labels.py", `    "amd": "AMD ROCm stage",`, `    "amd": "AMD ROCm stage",
    "deploy": "split deployment",`)
				testfiles.Write(t, root, "tests/e2e/deploy/test_split_deploy.py", "register_cuda_ci(est_time=900, suite=\"stage-c-4-gpu-h200\", labels=[\"deploy\"])\n")
			},
			tables: map[string]any{"labels": labels},
			plans: [][]string{
				{"--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--labels", "run-ci-deploy"},
				{"--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--labels", "run-ci-deploy", "--auto-partition-id", "0", "--auto-partition-size", "3"},
				{"--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--cadence", "weekly"},
				{"--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--labels", "run-ci-megatron"},
			},
			policies: [][]string{
				{"--event", "pull_request", "--pr-labels-json", `["run-ci-deploy"]`, "--changed-files", "diffs/deploy.z"},
				{"--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--changed-files", "diffs/deploy.z"},
			},
			shards: shardCounts,
		},
		{
			name: "new-suite-and-stage",
			change: func(t *testing.T, root string) {
				testfiles.Write(t, root, "tests/ci/run_suite.py", runSuiteWithSuites("stage-c-8-gpu-b200"))
				edit(t, root, "tests/ci/stage_selection.py", `        "stage-c-4-gpu-mi350",`, `        "stage-c-4-gpu-mi350",
        "stage-c-8-gpu-b200",`)
				f := filepath.Join(root, ".github", "workflows", "pr-test.yml")
				data, _ := os.ReadFile(f)
				if err := os.WriteFile(f, append(data, stageJob("stage-c-8-gpu-b200", `["b200", "8gpu"]`, 2)...), 0o644); err != nil {
					t.Fatal(err)
				}
				testfiles.Write(t, root, "tests/e2e/blackwell/test_b200_moe.py", "register_cuda_ci(est_time=1200, suite=\"stage-c-8-gpu-b200\", labels=[\"megatron\"])\n")
				testfiles.Write(t, root, "tests/e2e/blackwell/test_b200_dense.py", "register_cuda_ci(est_time=700, suite=\"stage-c-8-gpu-b200\", labels=[\"megatron\", \"short\"])\n")
			},
			tables: map[string]any{
				"suites": map[string][]string{
					"cpu":  {"stage-a-cpu", "stage-b-cpu"},
					"cuda": {"stage-b-2-gpu-h200", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200", "stage-c-4-gpu-h200", "stage-c-2-gpu-h200", "stage-c-8-gpu-b200"},
					"rocm": {"stage-c-4-gpu-mi350", "nightly-stage-c-8-gpu-mi350", "nightly-stage-c-4-gpu-mi350", "nightly-stage-c-2-gpu-mi350"},
				},
				"pr_gpu_stages": []string{"stage-b-2-gpu-h200", "stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200", "stage-c-4-gpu-mi350", "stage-c-8-gpu-b200"},
			},
			plans: [][]string{
				{"--hw", "cuda", "--suite", "stage-c-8-gpu-b200", "--labels", "run-ci-megatron"},
				{"--hw", "cuda", "--suite", "stage-c-8-gpu-b200", "--labels", "run-ci-megatron", "--auto-partition-id", "1", "--auto-partition-size", "2"},
			},
			policies: [][]string{
				{"--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--changed-files", "diffs/b200.z"},
				{"--event", "pull_request", "--pr-labels-json", `["run-ci-short"]`, "--changed-files", "diffs/cpu_only.z"},
				{"--event", "pull_request", "--pr-labels-json", `["run-ci-all"]`, "--changed-files", "diffs/docs_only.z"},
			},
			shards: append(withShards("", 0)[:7:7], append([]struct {
				hw, suite string
				shards    int
			}{{"cuda", "stage-c-8-gpu-b200", 2}}, shardCounts[7:]...)...),
		},
		{
			name: "new-no-gpu-prefix",
			change: func(t *testing.T, root string) {
				edit(t, root, "tests/ci/stage_selection.py", `_NO_GPU_PREFIXES = ("docs/",)`, `_NO_GPU_PREFIXES = ("docs/", "examples/")`)
			},
			tables: map[string]any{"no_gpu_prefixes": []string{"docs/", "examples/"}},
			policies: [][]string{
				{"--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--changed-files", "diffs/examples.z"},
				{"--event", "pull_request", "--pr-labels-json", `["run-ci-all"]`, "--changed-files", "diffs/examples.z"},
				{"--event", "pull_request", "--pr-labels-json", `[]`, "--changed-files", "diffs/examples.z"},
			},
			shards: shardCounts,
		},
		{
			name: "changed-cron",
			change: func(t *testing.T, root string) {
				edit(t, root, "tests/ci/ci_policy.py", `    "0 15 * * 0-5": (NIGHTLY_CADENCE, ()),
    "0 15 * * 6": (WEEKLY_CADENCE, ()),`, `    "0 14 * * 0-5": (NIGHTLY_CADENCE, ()),
    "0 14 * * 6": (WEEKLY_CADENCE, ("run-ci-long",)),`)
				for _, wf := range []string{"pr-test.yml", "pr-test-rocm.yml"} {
					edit(t, root, ".github/workflows/"+wf, "- cron: '0 15 * * 0-5'\n    - cron: '0 15 * * 6'", "- cron: '0 14 * * 0-5'\n    - cron: '0 14 * * 6'")
				}
			},
			tables: map[string]any{"crons": map[string][]any{"0 14 * * 0-5": {"nightly", []string{}}, "0 14 * * 6": {"weekly", []string{"run-ci-long"}}}},
			policies: [][]string{
				{"--event", "schedule", "--schedule", "0 14 * * 0-5"},
				{"--event", "schedule", "--schedule", "0 14 * * 6"},
				{"--event", "schedule", "--schedule", "0 15 * * 0-5"},
			},
			shards: shardCounts,
		},
		{
			name: "changed-shard-count",
			change: func(t *testing.T, root string) {
				edit(t, root, ".github/workflows/pr-test.yml", `        partition_id: [0, 1, 2]`, `        partition_id: [0, 1, 2, 3, 4]`)
				edit(t, root, ".github/workflows/pr-test.yml", `--auto-partition-size 3`, `--auto-partition-size 5`)
			},
			tables: map[string]any{},
			shards: withShards("stage-c-4-gpu-h200", 5),
		},
	}
}

// variantDiffs are the changed-file lists the variants' policy cases use.
var variantDiffs = map[string]string{
	"diffs/deploy.z":   "A\x00tests/e2e/deploy/test_split_deploy.py\x00",
	"diffs/b200.z":     "A\x00tests/e2e/blackwell/test_b200_moe.py\x00M\x00docs/ci.md\x00",
	"diffs/examples.z": "M\x00examples/run_qwen3.py\x00M\x00README.md\x00",
}

func TestVariantTreesMatchOracle(t *testing.T) {
	base := testdataRepo(t) // skips without python
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			root := copyTree(t, base)
			for rel, content := range variantDiffs {
				testfiles.Write(t, root, rel, content)
			}
			v.change(t, root)
			tablesFile := writeTablesJSON(t, v.tables)

			if code, out, stderr := runArgs([]string{"lint", "--repo", root}); code != 0 {
				t.Fatalf("the variant must lint clean, got exit %d:\n%s%s", code, out, stderr)
			}
			var cases []oracleCase
			for _, args := range v.plans {
				cases = append(cases, oracleCase{name: strings.Join(args, " "), goArgs: args, orArgs: append(slices.Clone(args), "--tables", tablesFile), repo: root})
			}
			for _, args := range v.policies {
				args = slices.Clone(args)
				for i, a := range args {
					if strings.HasPrefix(a, "diffs/") {
						args[i] = filepath.Join(root, a)
					}
				}
				cases = append(cases, oracleCase{name: strings.Join(args, " "), goArgs: args, orArgs: append(slices.Clone(args), "--tables", tablesFile), policy: true, repo: root})
			}
			// plan --all must plan exactly the hand-derived roster shards.
			var all []oracleCase
			for _, st := range v.shards {
				parts := [][]string{nil}
				if st.shards > 1 {
					parts = nil
					for i := 0; i < st.shards; i++ {
						parts = append(parts, []string{"--auto-partition-id", fmt.Sprint(i), "--auto-partition-size", fmt.Sprint(st.shards)})
					}
				}
				for _, p := range parts {
					args := append([]string{"--hw", st.hw, "--suite", st.suite, "--cadence", "nightly", "--tables", tablesFile}, p...)
					all = append(all, oracleCase{orArgs: args, repo: root})
				}
			}
			want := runOracle(t, root, append(cases, all...))
			for i, c := range cases {
				w := want[i]
				args := append([]string{"plan", "--repo", root}, c.goArgs...)
				if c.policy {
					args = append([]string{"policy", "--json", "--repo", root}, c.goArgs...)
				}
				code, got, stderr := runArgs(args)
				if (code == 0) != (w.Code == 0) {
					t.Errorf("%s: miles-ci exit %d (%s), oracle %d (%s)", c.name, code, stderr, w.Code, w.Stderr)
					continue
				}
				if c.policy && code == 0 {
					got = compact(t, got)
				}
				if code == 0 && got != w.Stdout {
					t.Errorf("%s:\nwanted (oracle):\n%s\ngot:\n%s", c.name, w.Stdout, got)
				}
			}
			var wantAll strings.Builder
			for i := range all {
				if w := want[len(cases)+i]; w.Code != 0 {
					t.Fatalf("oracle failed on %v: %s", all[i].orArgs, w.Stderr)
				} else {
					wantAll.WriteString(w.Stdout)
				}
			}
			code, got, stderr := runArgs([]string{"plan", "--repo", root, "--all", "--cadence", "nightly"})
			if code != 0 || got != wantAll.String() {
				t.Errorf("plan --all: exit %d (%s); wanted (oracle, hand-derived shards):\n%s\ngot:\n%s", code, stderr, wantAll.String(), got)
			}
		})
	}
}

func compact(t *testing.T, s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("invalid JSON %q: %v", s, err)
	}
	return withoutSelection(b.String()) + "\n"
}

// Before the tables were read, a test with a label the checkout adds was
// refused; now the checkout's labels.py decides.
func TestNewLabelAcceptedOnlyWithItsTable(t *testing.T) {
	root := copyTree(t, filepath.Join("..", "..", "..", "testdata", "miles"))
	testfiles.Write(t, root, "tests/e2e/deploy/test_split_deploy.py", "register_cuda_ci(est_time=900, suite=\"stage-c-4-gpu-h200\", labels=[\"deploy\"])\n")
	args := []string{"plan", "--repo", root, "--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--labels", "run-ci-deploy"}
	if code, _, stderr := runArgs(args); code != 1 || !strings.Contains(stderr, "unknown labels ['deploy']") {
		t.Errorf("without the label in labels.py: wanted the unknown-label error, got %d %q", code, stderr)
	}
	edit(t, root, "tests/ci/labels.py", `    "amd": "AMD ROCm stage",`, `    "amd": "AMD ROCm stage",
    "deploy": "split deployment",`)
	code, out, stderr := runArgs(args)
	if code != 0 || !strings.Contains(out, "tests/e2e/deploy/test_split_deploy.py (est_time=900.0s)") {
		t.Errorf("with the label in labels.py: wanted the test planned, got %d %q %q", code, out, stderr)
	}
}

// The notice about built-in tables goes to stderr once, and --json output
// stays the same with or without the checkout's (equal) tables.
func TestTablesNotice(t *testing.T) {
	bare := copyTree(t, filepath.Join("..", "..", "..", "testdata", "miles"))
	for _, rel := range []string{"tests/ci/labels.py", "tests/ci/stage_selection.py", "tests/ci/ci_policy.py", "tests/ci/run_suite.py", ".github"} {
		if err := os.RemoveAll(filepath.Join(bare, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	run := func(repo string, args ...string) (int, string, string) {
		var stdout, stderr strings.Builder
		code := Run(append([]string{args[0], "--repo", repo}, args[1:]...), Env{Stdout: &stdout, Stderr: &stderr})
		return code, stdout.String(), stderr.String()
	}
	for _, args := range [][]string{
		{"plan", "--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--cadence", "nightly", "--json"},
		{"plan", "--all", "--json"},
		{"policy", "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--json"},
		{"stages", "--json"},
	} {
		codeBare, outBare, errBare := run(bare, args...)
		codeRead, outRead, errRead := run(filepath.Join("..", "..", "..", "testdata", "miles"), args...)
		if codeBare != 0 || codeRead != 0 {
			t.Fatalf("%v: exit %d / %d: %s %s", args, codeBare, codeRead, errBare, errRead)
		}
		if n := strings.Count(errBare, "::notice::"); n != 1 || !strings.Contains(errBare, "holds no Miles CI tables") {
			t.Errorf("%v: wanted one notice on stderr, got %q", args, errBare)
		}
		if args[0] == "stages" {
			continue // the rows say where they came from
		}
		if outBare != outRead {
			t.Errorf("%v: stdout differs between built-in and read tables:\n%s\n%s", args, outBare, outRead)
		}
	}
}

func TestLintCommand(t *testing.T) {
	for _, repo := range []string{"miles", "miles-like"} {
		code, out, stderr := runArgs([]string{"lint", "--repo", filepath.Join("..", "..", "..", "testdata", repo)})
		if code != 0 || !strings.HasPrefix(out, "no drift: ") {
			t.Errorf("testdata/%s: wanted no drift, got %d %q %q", repo, code, out, stderr)
		}
	}
	root := copyTree(t, filepath.Join("..", "..", "..", "testdata", "miles"))
	edit(t, root, "tests/ci/labels.py", `    "amd": "AMD ROCm stage",`, `    "amd": "AMD ROCm stage",
    "deploy": "split deployment",`)
	code, out, _ := runArgs([]string{"lint", "--repo", root})
	want := "tests/ci/labels.py:27: unused-label: label deploy is in KNOWN_LABELS but no test uses it, so run-ci-deploy selects nothing; label a test with it or drop it\n1 drift(s) found\n"
	if code != 1 || out != want {
		t.Errorf("wanted exit 1 and %q, got %d %q", want, code, out)
	}
	// Under GitHub Actions each drift is an annotation on its file and line.
	code, out, _ = runCLI(t, map[string]string{"GITHUB_ACTIONS": "true"}, "lint", "--repo", root)
	want = "::error file=tests/ci/labels.py,line=27::unused-label: label deploy is in KNOWN_LABELS but no test uses it, so run-ci-deploy selects nothing; label a test with it or drop it\n::notice::1 drift(s) found\n"
	if code != 1 || out != want {
		t.Errorf("GITHUB_ACTIONS=true: wanted exit 1 and %q, got %d %q", want, code, out)
	}
	code, out, _ = runArgs([]string{"lint", "--repo", root, "--json"})
	var res usecase.LintAnswer
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || len(res.Drift) != 1 || res.Drift[0].Kind != policy.DriftUnusedLabel || res.Drift[0].Line != 27 {
		t.Errorf("--json: wanted exit 1 and one unused-label drift, got %d %q (%v)", code, out, err)
	}
}

// file-plan takes the runners of a stage the checkout adds from its workflow.
func TestFilePlanUsesCheckoutRoster(t *testing.T) {
	root := copyTree(t, filepath.Join("..", "..", "..", "testdata", "miles"))
	testfiles.Write(t, root, "tests/ci/run_suite.py", runSuiteWithSuites("stage-c-8-gpu-b200"))
	f := filepath.Join(root, ".github", "workflows", "pr-test.yml")
	data, _ := os.ReadFile(f)
	if err := os.WriteFile(f, append(data, stageJob("stage-c-8-gpu-b200", `["b200", "8gpu"]`, 2)...), 0o644); err != nil {
		t.Fatal(err)
	}
	testfiles.Write(t, root, "tests/e2e/blackwell/test_b200_moe.py", "register_cuda_ci(est_time=1200, suite=\"stage-c-8-gpu-b200\", labels=[\"megatron\"])\n")
	code, out, stderr := runCLI(t, nil, "file-plan", "--repo", root, "--file", "tests/e2e/blackwell/test_b200_moe.py")
	if code != 0 || !strings.Contains(out, `runs_on: ["b200", "8gpu"]`) {
		t.Errorf("wanted the b200 runners, got %d %q %q", code, out, stderr)
	}
}
