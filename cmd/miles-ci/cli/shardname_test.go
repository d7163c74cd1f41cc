package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/radixark/miles-ci/report"
)

// shardNames are every way an output may name a shard: "shard 2/3",
// Miles' "Partition: 2/3", "shard 2 of 3", "(1/3)", a folder "2-of-3".
var shardNames = regexp.MustCompile(`(?:shard |Partition: |\()(\d+)(?:/| of )(\d+)|/(\d+)-of-(\d+)`)

// TestOneShardNumber holds one display for one shard across every output:
// --auto-partition-id 1 of stage-c-4-gpu-h200's three shards is "shard 2/3"
// in plan (Miles' own "Partition: 2/3 (0-based id=1)"), run, explain, ci's
// table, state lines, step summary and summary.json, the shard's own
// summary (run's and the module's test summary), and its folder is 2-of-3.
func TestOneShardNumber(t *testing.T) {
	const stage, want = "stage-c-4-gpu-h200", "2/3"
	labels := []string{"run-ci-megatron", "run-ci-sglang"}
	only := func(what, text string) {
		t.Helper()
		ms := shardNames.FindAllStringSubmatch(text, -1)
		if len(ms) == 0 {
			t.Errorf("%s names no shard:\n%s", what, text)
		}
		for _, m := range ms {
			got := m[1] + "/" + m[2]
			if m[3] != "" {
				got = m[3] + "/" + m[4]
			}
			if got != want {
				t.Errorf("%s names the shard %q (%q); wanted %q as every output names it", what, got, m[0], want)
			}
		}
	}
	_, out, _ := runCLI(t, nil, append([]string{"plan", "--repo", milesRepo(), "--hw", "cuda", "--suite", stage,
		"--auto-partition-id", "1", "--auto-partition-size", "3", "--labels"}, labels...)...)
	only("plan", out)
	if !strings.Contains(out, "Partition: 2/3 (0-based id=1)") {
		t.Errorf("wanted plan to print Miles' own partition line, got\n%s", out)
	}
	_, out, _ = runCLI(t, nil, append([]string{"run", "--repo", milesRepo(), "--stage", stage, "--shard", "2", "--dry-run", "--labels"}, labels...)...)
	only("run --dry-run", strings.SplitN(out, "\n", 2)[0])
	_, out, _ = runCLI(t, nil, append([]string{"explain", "--repo", milesRepo(), "--file", "tests/e2e/sglang/test_sglang_weight_update.py", "--labels"}, labels...)...)
	only("explain", out)

	// ci: the dry run's table, then a run's table, state lines, folders and summaries.
	ciArgs := []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron","run-ci-sglang"]`, "--gpus", "none", "--only", stage}
	_, out, _ = runCLI(t, nil, append(ciArgs, "--dry-run")...)
	only("ci --dry-run", shardLines(t, out, stage))
	fakeCIEngine(t, nil)
	results := filepath.Join(t.TempDir(), "results")
	code, out, stderr := runCLI(t, nil, append(ciArgs, "--quiet", "--results", results)...)
	if code != 0 {
		t.Fatalf("wanted exit 0, got %d\n%s\n%s", code, out, stderr)
	}
	step, _ := os.ReadFile(filepath.Join(results, "step-summary.md"))
	for what, text := range map[string]string{"ci's table": out, "ci's state lines": stderr, "ci's step summary": string(step)} {
		// Every shard of the stage is there: each named as "shard N/3",
		// this one among them.
		for _, m := range shardNames.FindAllStringSubmatch(text, -1) {
			if !strings.HasPrefix(m[0], "shard ") || m[2] != "3" {
				t.Errorf("%s names a shard %q; wanted shard N/3 as every output names it", what, m[0])
			}
		}
		if !strings.Contains(text, stage+" shard 2/3") {
			t.Errorf("%s lacks %q:\n%s", what, stage+" shard 2/3", text)
		}
	}
	var sum struct {
		Jobs []struct {
			Stage   string `json:"stage"`
			Shard   *int   `json:"shard"`
			Shards  int    `json:"shards"`
			Results string `json:"results"`
		} `json:"jobs"`
	}
	data, _ := os.ReadFile(filepath.Join(results, "summary.json"))
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	for _, j := range sum.Jobs {
		if j.Stage == stage && j.Shard != nil && *j.Shard == 1 {
			only("summary.json's results folder", "/"+j.Results)
			shard, err := report.ReadResults(filepath.Join(results, j.Results))
			if err != nil {
				t.Fatal(err)
			}
			only("the shard's summary (run's and the module's test summary)", shard.Text())
		}
	}
}

// shardLines are the lines of a ci table about the shard whose command says
// --auto-partition-id 1: its title line.
func shardLines(t *testing.T, out, stage string) string {
	t.Helper()
	lines := strings.Split(out, "\n")
	var got []string
	for i, l := range lines {
		if strings.Contains(l, "--suite "+stage+" --auto-partition-id 1 ") && i > 0 {
			got = append(got, lines[i-1])
		}
	}
	return strings.Join(got, "\n")
}

// TestGuideJobTitle holds the guide's mapping from a GitHub job title to a
// command (docs/when-ci-fails.md, step 1): the title it quotes names the
// matrix entry of the stage's job in Miles' pr-test.yml (testdata/miles is
// written in its form: partition_id [0, 1, 2, 3], --auto-partition-id ${{
// matrix.partition_id }}), and the --shard its command gives runs exactly
// that entry's --auto-partition-id.
func TestGuideJobTitle(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "when-ci-fails.md"))
	if err != nil {
		t.Fatal(err)
	}
	title := regexp.MustCompile("`PR Test / (stage-[a-z0-9-]+) \\((\\d+)\\) / run-cpu`").FindStringSubmatch(string(guide))
	if title == nil {
		t.Fatal("the guide quotes no job title such as `PR Test / stage-a-cpu (1) / run-cpu`")
	}
	stage, entry := title[1], title[2]
	cmd := regexp.MustCompile(`miles-ci run --stage ` + stage + ` --shard (\d+) `).FindStringSubmatch(string(guide))
	if cmd == nil {
		t.Fatalf("the guide gives no `miles-ci run --stage %s --shard N` command", stage)
	}
	// GitHub titles a matrix job "JOB (VALUE)": the entry whose
	// partition_id is the title's number, run with that partition id.
	wf, err := os.ReadFile(filepath.Join(milesRepo(), ".github", "workflows", "pr-test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct {
					PartitionID []int `yaml:"partition_id"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(wf, &doc); err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(entry)
	if !slices.Contains(doc.Jobs[stage].Strategy.Matrix.PartitionID, n) {
		t.Fatalf("%s's matrix has no partition_id %d: %v", stage, n, doc.Jobs[stage].Strategy.Matrix.PartitionID)
	}
	_, out, stderr := runCLI(t, nil, "run", "--repo", milesRepo(), "--stage", stage, "--shard", cmd[1], "--dry-run")
	if want := fmt.Sprintf("--auto-partition-id %d ", n); !strings.Contains(out, want) {
		t.Errorf("the guide maps the job %s (%d) to --shard %s, which runs\n%s\n%s\nwanted %q, as the job runs", stage, n, cmd[1], out, stderr, want)
	}
}

// TestShardOutOfRange: --shard counts as the outputs do, 1 to the stage's
// count, and a shard outside that (0, or one above the count) is an error
// naming the range.
func TestShardOutOfRange(t *testing.T) {
	for shard, want := range map[string]string{
		"0": "miles-ci run: --shard must be in 1..256, got 0\n",
		"5": "::error::stage stage-a-cpu has shards 1 to 4, as every output numbers them (shard 1/4 to 4/4); 5 is not one of them\n",
	} {
		code, _, stderr := runCLI(t, nil, "run", "--repo", milesRepo(), "--stage", "stage-a-cpu", "--shard", shard, "--dry-run")
		if code == 0 || !strings.HasPrefix(stderr, want) {
			t.Errorf("--shard %s: wanted an error starting %q, got %d\n%s", shard, want, code, stderr)
		}
	}
	_, out, _ := runCLI(t, nil, "run", "--repo", milesRepo(), "--stage", "stage-a-cpu", "--shard", "4", "--dry-run")
	if !strings.HasPrefix(out, "stage-a-cpu shard 4/4 (0-based id=3)") {
		t.Errorf("--shard 4: wanted shard 4/4, got\n%s", out)
	}
}
