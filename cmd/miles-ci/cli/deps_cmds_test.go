package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/policy"
)

// body is the path of a testdata PR body.
func body(name string) string {
	return filepath.Join("..", "..", "..", "testdata", "pr-bodies", name)
}

// runCLI runs miles-ci with args and an environment map.
func runCLI(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(args, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }})
	return code, out.String(), dropNotices(errb.String())
}

// dropNotices removes the ::notice:: lines (which tables are built-in) that
// every command may print; TestTablesNotice checks them.
func dropNotices(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "::notice::") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

type cliCase struct {
	name       string
	args       []string
	env        map[string]string
	wantCode   int
	wantStdout string
	wantStderr string // exact unless wantPrefix
	wantPrefix bool
	wantOutput string // --github-output file content, checked when non-empty
	// env values may say $OUT for the output file; GITHUB_OUTPUT=$OUT stands
	// in for --github-output.
}

func runCases(t *testing.T, tests []cliCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outFile := filepath.Join(t.TempDir(), "github_output")
			args := tt.args
			vars := map[string]string{}
			for k, v := range tt.env {
				vars[k] = strings.ReplaceAll(v, "$OUT", outFile)
			}
			if tt.wantOutput != "" && vars["GITHUB_OUTPUT"] == "" {
				args = append(append([]string(nil), args...), "--github-output", outFile)
			}
			code, stdout, stderr := runCLI(t, vars, args...)
			if code != tt.wantCode {
				t.Errorf("exit code: wanted %d, got %d (stderr %q)", tt.wantCode, code, stderr)
			}
			if stdout != tt.wantStdout {
				t.Errorf("stdout: wanted %q, got %q", tt.wantStdout, stdout)
			}
			if tt.wantPrefix {
				if !strings.HasPrefix(stderr, tt.wantStderr) {
					t.Errorf("stderr: wanted prefix %q, got %q", tt.wantStderr, stderr)
				}
			} else if stderr != tt.wantStderr {
				t.Errorf("stderr: wanted %q, got %q", tt.wantStderr, stderr)
			}
			if tt.wantOutput != "" {
				got, _ := os.ReadFile(outFile)
				if string(got) != tt.wantOutput {
					t.Errorf("github output: wanted %q, got %q", tt.wantOutput, string(got))
				}
			}
		})
	}
}

func TestImageCommand(t *testing.T) {
	runCases(t, []cliCase{
		{name: "cuda default", args: []string{"image", "--backend", "cuda"},
			wantStdout: "Resolved CI image: radixark/miles:dev (tag from default)\n",
			wantOutput: "container_image=radixark/miles:dev\n"},
		{name: "cuda pr body", args: []string{"image", "--backend", "cuda", "--pr-body-file", body("fenced-text-block.md")},
			wantStdout: "Resolved CI image: radixark/miles:dev-202611300915 (tag from pr-body line 9)\n",
			wantOutput: "container_image=radixark/miles:dev-202611300915\n"},
		{name: "cuda json", args: []string{"image", "--backend", "cuda", "--json", "--pr-image-available", "--pr-number", "2674"},
			wantStdout: "{\n  \"image\": \"radixark/miles:pr-2674\",\n  \"tag\": \"pr-2674\",\n  \"source\": \"pr-image\",\n  \"line\": 0\n}\n"},
		{name: "env fallbacks", args: []string{"image", "--backend", "cuda"},
			env:        map[string]string{"PR_IMAGE_AVAILABLE": "true", "PR_NUMBER": "7", "PR_BODY": "ci-image-tag: x"},
			wantStdout: "Resolved CI image: radixark/miles:pr-7 (tag from pr-image)\n"},
		{name: "flag beats env", args: []string{"image", "--backend", "cuda", "--image-tag-input", "dev-2"},
			env:        map[string]string{"INPUT_CI_IMAGE_TAG": "dev-1"},
			wantStdout: "Resolved CI image: radixark/miles:dev-2 (tag from input)\n"},
		{name: "called", args: []string{"image", "--backend", "cuda", "--called-image-tag", "release-v0.3.0-ci", "--image-tag-input", "dev"},
			wantStdout: "Resolved CI image: radixark/miles:release-v0.3.0-ci (tag from called)\n"},
		{name: "release lockfile", args: []string{"image", "--backend", "cuda", "--lockfile", filepath.Join("..", "..", "..", "testdata", "miles-repo", "release-lock.json")},
			wantStdout: "Resolved CI image: radixark/miles:release-v0.3.0-ci (tag from lockfile)\n"},
		{name: "missing lockfile", args: []string{"image", "--backend", "cuda", "--lockfile", "/nonexistent/release-lock.json"},
			wantCode: 1, wantStderr: "::error::--lockfile: /nonexistent/release-lock.json does not exist; give the release-lock.json a release branch cut writes\n"},
		{name: "bad lockfile", args: []string{"image", "--backend", "cuda", "--lockfile", body("empty.md")},
			wantCode: 1, wantStderr: "::error::" + body("empty.md") + ": not valid JSON: the file ends too early; the file must be one JSON object of string fields\n"},
		{name: "rocm ignores pr body", args: []string{"image", "--backend", "rocm", "--pr-body-file", body("fenced-text-block.md")},
			wantStdout: "Resolved CI image: rocm/sgl-dev:miles-rocm720-mi35x (tag from default)\n",
			wantOutput: "container_image=rocm/sgl-dev:miles-rocm720-mi35x\n"},
		{name: "full image name", args: []string{"image", "--backend", "cuda", "--pr-body-file", body("invalid-value.md")},
			wantCode: 1, wantStderr: "::error::ci-image-tag must be a Docker tag, not a full image name: radixark/miles:dev\n"},
		{name: "rocm full image name", args: []string{"image", "--backend", "rocm", "--image-tag-input", "rocm/sgl-dev:x"},
			wantCode: 1, wantStderr: "::error::ci-image-tag must be a Docker tag, not a full image name: rocm/sgl-dev:x\n"},
		{name: "missing body file", args: []string{"image", "--backend", "cuda", "--pr-body-file", "/nonexistent/body.md"},
			wantCode: 1, wantStderr: "::error::--pr-body-file: /nonexistent/body.md does not exist; give the file holding the pull request description (GitHub caps one at 65536 characters)\n"},
		{name: "no backend", args: []string{"image"},
			wantCode: 2, wantStderr: "miles-ci image: --backend is required; use cuda, rocm, cpu\n", wantPrefix: true},
		{name: "bad backend", args: []string{"image", "--backend", "tpu"},
			wantCode: 2, wantStderr: "miles-ci image: --backend \"tpu\" is not one of cuda, rocm, cpu\n", wantPrefix: true},
		{name: "unknown flag", args: []string{"image", "--bogus"},
			wantCode: 2, wantStderr: "miles-ci image: unknown flag --bogus\nusage: miles-ci image --backend", wantPrefix: true},
		{name: "single dash", args: []string{"image", "-json", "--backend", "cuda"},
			wantCode: 2, wantStderr: "miles-ci image: unexpected argument \"-json\"; every input is a --flag\n", wantPrefix: true},
		{name: "pr number out of range", args: []string{"image", "--backend", "cuda", "--pr-image-available", "--pr-number", "0"},
			wantCode: 2, wantStderr: "miles-ci image: --pr-number must be in 1..2147483647, got 0\n", wantPrefix: true},
		{name: "pr number not a number", args: []string{"image", "--backend", "cuda", "--pr-image-available", "--pr-number", "x"},
			wantCode: 2, wantStderr: "miles-ci image: --pr-number needs an integer in 1..2147483647, got \"x\"\n", wantPrefix: true},
		{name: "GITHUB_OUTPUT", args: []string{"image", "--backend", "rocm"}, env: map[string]string{"GITHUB_OUTPUT": "$OUT"},
			wantStdout: "Resolved CI image: rocm/sgl-dev:miles-rocm720-mi35x (tag from default)\n",
			wantOutput: "container_image=rocm/sgl-dev:miles-rocm720-mi35x\n"},
		{name: "positional", args: []string{"image", "--backend", "cuda", "extra"},
			wantCode: 2, wantStderr: "miles-ci image: unexpected argument \"extra\"; every input is a --flag\n", wantPrefix: true},
		{name: "called and lockfile", args: []string{"image", "--backend", "cuda", "--called-image-tag", "a", "--lockfile", "b"},
			wantCode: 2, wantStderr: "miles-ci image: --called-image-tag and --lockfile both name the called tag; give one\n", wantPrefix: true},
		{name: "help", args: []string{"image", "-h"},
			wantCode: 0, wantStdout: imageUsage(t)},
	})
}

func TestDepsCommand(t *testing.T) {
	lockRepo := filepath.Join("..", "..", "..", "testdata", "miles-repo")
	noLock := milesRepo()
	runCases(t, []cliCase{
		{name: "cuda defaults", args: []string{"deps", "--backend", "cuda", "--repo", noLock},
			wantStdout: "Resolved: megatron=miles-main -> fetch=miles-main (default), sglang=sglang-miles -> fetch=sglang-miles (default)\n",
			wantOutput: "ci_megatron_pr=miles-main\nci_sglang_pr=sglang-miles\n"},
		{name: "cpu lockfile and pr body", args: []string{"deps", "--backend", "cpu", "--repo", lockRepo, "--pr-body-file", body("example-line.md")},
			wantStdout: "Resolved: megatron=37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5 -> fetch=37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5 (lockfile), sglang=#1234 -> fetch=refs/pull/1234/head (pr-body line 5)\n" + offlineNote("sgl-project/sglang#1234"),
			wantOutput: "ci_megatron_pr=37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5\nci_sglang_pr=refs/pull/1234/head\n"},
		{name: "cuda inputs from env", args: []string{"deps", "--backend", "cuda", "--repo", lockRepo},
			env:        map[string]string{"INPUT_MEGATRON_PR": "#82", "PR_BODY": "ci-megatron-pr: x"},
			wantStdout: "Resolved: megatron=#82 -> fetch=refs/pull/82/head (input), sglang=cb05a44f35d2e1c0b9a8f7e6d5c4b3a29180f7e6 -> fetch=cb05a44f35d2e1c0b9a8f7e6d5c4b3a29180f7e6 (lockfile)\n" + offlineNote("radixark/Megatron-LM#82")},
		{name: "rocm nothing named", args: []string{"deps", "--backend", "rocm", "--repo", lockRepo, "--pr-body-file", body("directive-in-prose.md")},
			wantStdout: "No dependency ref named: keeping the copies baked into the image\nResolved: megatron= -> fetch= (baked), sglang= -> fetch= (baked)\n",
			wantOutput: "skip_dependency_install=true\nci_megatron_pr=\nci_sglang_pr=\n"},
		{name: "rocm body names sglang", args: []string{"deps", "--backend", "rocm", "--pr-body-file", body("example-line.md")},
			wantStdout: "Dependency refs named by the pull request body: installing them over the image's baked copies\nResolved: megatron= -> fetch= (baked), sglang=#1234 -> fetch=refs/pull/1234/head (pr-body line 5)\n" + offlineNote("sgl-project/sglang#1234"),
			wantOutput: "skip_dependency_install=false\nci_megatron_pr=\nci_sglang_pr=refs/pull/1234/head\n"},
		{name: "rocm input", args: []string{"deps", "--backend", "rocm", "--sglang-input", "c447264eba460045e6e961fd7cf1bfbaf038db6b"},
			wantStdout: "Dependency refs named by the dispatch inputs: installing them over the image's baked copies\nResolved: megatron= -> fetch= (baked), sglang=c447264eba460045e6e961fd7cf1bfbaf038db6b -> fetch=c447264eba460045e6e961fd7cf1bfbaf038db6b (input)\n"},
		{name: "rocm crlf json", args: []string{"deps", "--backend", "rocm", "--json", "--pr-body-file", body("crlf.md")},
			wantStdout: `{
  "install": true,
  "sglang": {
    "ref": "sglang-miles",
    "fetch": "sglang-miles",
    "source": "pr-body",
    "line": 6
  },
  "megatron": {
    "ref": "2e64d788b1c4a0f9e8d7c6b5a4f3e2d1c0b9a8f7",
    "fetch": "2e64d788b1c4a0f9e8d7c6b5a4f3e2d1c0b9a8f7",
    "source": "pr-body",
    "line": 5
  },
  "warnings": []
}
`},
		{name: "duplicate warns", args: []string{"deps", "--backend", "cuda", "--repo", noLock, "--pr-body-file", body("duplicate.md")},
			wantStdout: "Resolved: megatron=miles-main -> fetch=miles-main (default), sglang=c447264eba460045e6e961fd7cf1bfbaf038db6b -> fetch=c447264eba460045e6e961fd7cf1bfbaf038db6b (pr-body line 3)\n",
			wantStderr: "::warning::pr-body line 7: ci-sglang-pr: sglang-miles is ignored; line 3 already set c447264eba460045e6e961fd7cf1bfbaf038db6b (the first directive wins; remove the other line)\n"},
		{name: "invalid value", args: []string{"deps", "--backend", "cuda", "--repo", noLock, "--pr-body-file", body("invalid-value.md")},
			wantCode:   1,
			wantStderr: "::error::pr-body line 5: ci-megatron-pr: value \"../../etc/passwd\" is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -; write a branch, tag, commit or PR number, e.g. \"ci-megatron-pr: #1234\" or \"ci-megatron-pr: miles-main\"\n"},
		{name: "option-like input", args: []string{"deps", "--backend", "rocm", "--megatron-input=--upload-pack=x"},
			wantCode:   1,
			wantStderr: "::error::dispatch input ci_megatron_pr: value \"--upload-pack=x\" starts with '-', which git would read as an option; give a branch, tag, commit or PR number, e.g. ci_megatron_pr=#1234 or ci_megatron_pr=miles-main\n"},
		{name: "bad backend", args: []string{"deps", "--backend", "CUDA"},
			wantCode: 2, wantStderr: "miles-ci deps: --backend \"CUDA\" is not one of cpu, cuda, rocm\n", wantPrefix: true},
		{name: "not a checkout", args: []string{"deps", "--backend", "cuda", "--repo", "/nonexistent/miles"},
			wantCode: 1, wantStderr: "::error::/nonexistent/miles does not exist: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it\n"},
		// ROCm never reads the checkout, but a --repo given with a typo is
		// still a typo, not something to ignore.
		{name: "rocm given a wrong checkout", args: []string{"deps", "--backend", "rocm", "--repo", "/nonexistent/miles"},
			wantCode: 1, wantStderr: "::error::/nonexistent/miles does not exist: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it\n"},
		{name: "no tests folder", args: []string{"deps", "--backend", "cpu", "--repo", filepath.Join("..", "..", "..", "testdata")},
			wantCode: 1, wantStderr: "::error::" + filepath.Join("..", "..", "..", "testdata") + " has no tests/ folder: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it\n"},
		{name: "GITHUB_OUTPUT", args: []string{"deps", "--backend", "cuda", "--repo", lockRepo}, env: map[string]string{"GITHUB_OUTPUT": "$OUT"},
			wantStdout: "Resolved: megatron=37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5 -> fetch=37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5 (lockfile), sglang=cb05a44f35d2e1c0b9a8f7e6d5c4b3a29180f7e6 -> fetch=cb05a44f35d2e1c0b9a8f7e6d5c4b3a29180f7e6 (lockfile)\n",
			wantOutput: "ci_megatron_pr=37f91617b0a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5\nci_sglang_pr=cb05a44f35d2e1c0b9a8f7e6d5c4b3a29180f7e6\n"},
	})
}

func TestDepsCommandBadLockfile(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(repo, deps.LockFileName)
	if err := os.WriteFile(lock, []byte(`{"release_branch": "release/v0.3.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, nil, "deps", "--backend", "cuda", "--repo", repo)
	if code != 1 || stdout != "" {
		t.Errorf("wanted exit 1 and no stdout, got %d and %q", code, stdout)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 10 {
		t.Fatalf("wanted one ::error:: line per missing field (10), got %d: %q", len(lines), stderr)
	}
	want := "::error::" + lock + ": field sglang_repo is missing; add it (release-branch-cut.yml writes all 11 fields)"
	if lines[0] != want {
		t.Errorf("wanted %q, got %q", want, lines[0])
	}
	// ROCm never reads the lockfile, so a broken one does not fail it.
	if code, _, stderr := runCLI(t, nil, "deps", "--backend", "rocm", "--repo", repo); code != 0 {
		t.Errorf("rocm: wanted exit 0, got %d (%q)", code, stderr)
	}
}

func TestFilePlanCommand(t *testing.T) {
	const cudaFile = "tests/e2e/precision/test_hf_attention_cp_relayout.py"
	root := t.TempDir()
	for _, f := range []string{cudaFile, "tests/fast/test_utils.py", "tests/e2e/amd/test_amd_qwen3.py", "tests/ci/test_none.py"} {
		path := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	disabled := "FIXME: re-enable once this case passes on the MI350 runners."
	registry := map[string][]policy.Registration{
		cudaFile:                          {{File: cudaFile, Backend: policy.CUDA, EstTime: 2000, Suite: "stage-c-4-gpu-h200", Labels: []string{"precision"}, Line: 7}},
		"tests/fast/test_utils.py":        {{File: "tests/fast/test_utils.py", Backend: policy.CPU, EstTime: 1, Suite: "stage-a-cpu", Implicit: true}},
		"tests/e2e/amd/test_amd_qwen3.py": {{File: "tests/e2e/amd/test_amd_qwen3.py", Backend: policy.ROCM, EstTime: 600, Suite: "stage-c-4-gpu-mi350", Labels: []string{"amd"}, Disabled: &disabled, Line: 3}},
	}
	old := loadRegistry
	loadRegistry = func(*policy.Tables) deps.Lookup {
		return func(string) (*policy.Registry, error) {
			reg := &policy.Registry{}
			for _, regs := range registry {
				reg.Registrations = append(reg.Registrations, regs...)
			}
			return reg, nil
		}
	}
	t.Cleanup(func() { loadRegistry = old })

	runCases(t, []cliCase{
		{name: "cuda", args: []string{"file-plan", "--repo", root, "--file", cudaFile, "--pr-body-file", body("fenced-text-block.md")},
			wantStdout: "file: " + cudaFile + "\nhw: cuda\nsuite: stage-c-4-gpu-h200\nruns_on: [\"h200\", \"4gpu\"]\ncontainer_image: radixark/miles:dev-202611300915\ntimeout_seconds: 2500\ncommand: python3 " + cudaFile + "\n",
			wantOutput: "hw=cuda\nsuite=stage-c-4-gpu-h200\nruns_on=[\"h200\", \"4gpu\"]\ncontainer_image=radixark/miles:dev-202611300915\ntimeout_seconds=2500\n"},
		{name: "cpu json from env", args: []string{"file-plan", "--json"},
			env: map[string]string{"CI_SOURCE_ROOT": root, "TEST_FILE": "tests/fast/test_utils.py", "CI_IMAGE_TAG": "dev-1"},
			wantStdout: `{
  "file": "tests/fast/test_utils.py",
  "hw": "cpu",
  "suite": "stage-a-cpu",
  "runs_on": [],
  "container_image": "radixark/miles:dev-1",
  "image_source": "input",
  "timeout_seconds": 1800,
  "command": [
    "pytest",
    "tests/fast/test_utils.py",
    "-v",
    "-x"
  ]
}
`},
		{name: "disabled rocm", args: []string{"file-plan", "--repo", root, "--file", "tests/e2e/amd/test_amd_qwen3.py"},
			wantCode: 1, wantStderr: "::error::tests/e2e/amd/test_amd_qwen3.py is disabled: FIXME: re-enable once this case passes on the MI350 runners.\n"},
		{name: "unregistered", args: []string{"file-plan", "--repo", root, "--file", "tests/ci/test_none.py"},
			wantCode: 1, wantStderr: "::error::tests/ci/test_none.py has no CI registration; /rerun-test runs only registered test files (add register_cpu_ci, register_cuda_ci or register_rocm_ci)\n"},
		{name: "bad path", args: []string{"file-plan", "--repo", root, "--file", "docs/test_x.py"},
			wantCode: 1, wantStderr: "::error::test file \"docs/test_x.py\" is not a registered tests/ path; give a repo-relative path like tests/e2e/precision/test_x.py under tests/e2e, tests/fast, tests/fast-gpu or tests/ci\n"},
		{name: "percent escaped", args: []string{"file-plan", "--repo", root, "--file", "tests/e2e/test_%0A.py"},
			wantCode: 1, wantStderr: "::error::test file \"tests/e2e/test_%250A.py\" is not a registered tests/ path; give a repo-relative path like tests/e2e/precision/test_x.py under tests/e2e, tests/fast, tests/fast-gpu or tests/ci\n"},
		{name: "no file", args: []string{"file-plan", "--repo", root},
			wantCode: 2, wantStderr: "miles-ci file-plan: --file is required (or set TEST_FILE)\n", wantPrefix: true},
		{name: "cpu outputs as file_run.py writes them", args: []string{"file-plan", "--repo", root, "--file", "tests/fast/test_utils.py"},
			env:        map[string]string{"GITHUB_OUTPUT": "$OUT"},
			wantStdout: "file: tests/fast/test_utils.py\nhw: cpu\nsuite: stage-a-cpu\nruns_on: (empty: a CPU file runs on the hosted ubuntu-latest runner)\ncontainer_image: radixark/miles:dev\ntimeout_seconds: 1800\ncommand: pytest tests/fast/test_utils.py -v -x\n",
			wantOutput: "hw=cpu\nsuite=stage-a-cpu\nruns_on=\ncontainer_image=radixark/miles:dev\ntimeout_seconds=1800\n"},
		{name: "not a checkout", args: []string{"file-plan", "--repo", filepath.Join(root, "typo"), "--file", "tests/fast/test_utils.py"},
			wantCode: 1, wantStderr: "::error::" + filepath.Join(root, "typo") + " does not exist: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it\n"},
	})
}

func TestPatchCheckCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base, patched := "x = 'cuda'\n", "x = 'rocm'\n"
	mkrepo := func(content string) string {
		dir := t.TempDir()
		if err := exec.Command("git", "init", "-q", dir).Run(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "fusions.py"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	patchFile := filepath.Join(t.TempDir(), "megatron.patch")
	patchText := "--- a/fusions.py\n+++ b/fusions.py\n@@ -1 +1 @@\n-x = 'cuda'\n+x = 'rocm'\n"
	if err := os.WriteFile(patchFile, []byte(patchText), 0o644); err != nil {
		t.Fatal(err)
	}
	applies, present, differs, dry, viaEnv := mkrepo(base), mkrepo(patched), mkrepo("x = 'other'\n"), mkrepo(base), mkrepo(base)
	notGit := t.TempDir()
	if err := os.WriteFile(filepath.Join(notGit, "fusions.py"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	runCases(t, []cliCase{
		{name: "applies", args: []string{"patch-check", "--megatron", applies, "--patch", patchFile},
			wantStdout: "ROCm patch applied to " + applies + ": " + patchFile + "\n",
			wantOutput: "rocm_patch_state=apply\n"},
		{name: "already present", args: []string{"patch-check", "--megatron", present, "--patch", patchFile},
			wantStdout: "ROCm patch already present in " + present + ": " + patchFile + " (nothing to apply)\n",
			wantOutput: "rocm_patch_state=already-present\n"},
		{name: "dry run", args: []string{"patch-check", "--megatron", dry, "--patch", patchFile, "--dry-run"},
			wantStdout: "ROCm patch applies cleanly to " + dry + ": " + patchFile + " (dry run, not applied)\n"},
		{name: "incompatible", args: []string{"patch-check", "--megatron", differs, "--patch", patchFile, "--ref", "#82"},
			wantCode:   1,
			wantStderr: "::error::Selected Megatron ref is incompatible with the ROCm patch: " + patchFile + " neither applies to nor is already present in Megatron-LM #82 (" + differs + "); pick a Megatron-LM ref based on miles-main or update docker/amd_patch/latest/megatron.patch to match it\n",
			wantOutput: "rocm_patch_state=incompatible\n"},
		{name: "GITHUB_OUTPUT", args: []string{"patch-check", "--megatron", viaEnv, "--patch", patchFile, "--dry-run"},
			env:        map[string]string{"GITHUB_OUTPUT": "$OUT"},
			wantStdout: "ROCm patch applies cleanly to " + viaEnv + ": " + patchFile + " (dry run, not applied)\n",
			wantOutput: "rocm_patch_state=apply\n"},
		{name: "missing patch", args: []string{"patch-check", "--megatron", applies, "--patch", "/nonexistent.patch"},
			wantCode: 1, wantStderr: "::error::--patch /nonexistent.patch does not exist; give the Miles workspace's docker/amd_patch/latest/megatron.patch\n"},
		{name: "patch is a folder", args: []string{"patch-check", "--megatron", applies, "--patch", applies},
			wantCode: 1, wantStderr: "::error::--patch " + applies + " is a folder, not a regular file; give the Miles workspace's docker/amd_patch/latest/megatron.patch\n"},
		{name: "missing dir", args: []string{"patch-check", "--megatron", "/nonexistent/mlm", "--patch", patchFile},
			wantCode: 1, wantStderr: "::error::--megatron /nonexistent/mlm does not exist: not a git checkout; give the root of the Megatron-LM checkout, e.g. /root/Megatron-LM\n"},
		{name: "not a git checkout", args: []string{"patch-check", "--megatron", notGit, "--patch", patchFile},
			wantCode: 1, wantStderr: "::error::--megatron " + notGit + " has no .git: not a git checkout; give the root of the Megatron-LM checkout, e.g. /root/Megatron-LM\n"},
		{name: "usage", args: []string{"patch-check", "--patch", patchFile},
			wantCode: 2, wantStderr: "miles-ci patch-check: --megatron is required\n", wantPrefix: true},
	})
	data, _ := os.ReadFile(filepath.Join(dry, "fusions.py"))
	if string(data) != base {
		t.Errorf("dry run changed the checkout: wanted %q, got %q", base, string(data))
	}
}

func TestPatchCheckCommandJSONIncompatible(t *testing.T) {
	old := patchRunner
	patchRunner = func(context.Context, string, []string) (deps.StepResult, error) {
		return deps.StepResult{ExitCode: 1}, nil
	}
	t.Cleanup(func() { patchRunner = old })
	patchFile := filepath.Join(t.TempDir(), "m.patch")
	if err := os.WriteFile(patchFile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, nil, "patch-check", "--megatron", dir, "--patch", patchFile, "--json")
	if code != 1 {
		t.Errorf("wanted exit 1, got %d", code)
	}
	if !strings.Contains(stdout, `"state": "incompatible"`) {
		t.Errorf("wanted the JSON state on stdout, got %q", stdout)
	}
	if !strings.HasPrefix(stderr, "::error::Selected Megatron ref is incompatible with the ROCm patch: ") {
		t.Errorf("wanted the spec's error, got %q", stderr)
	}
}

// TestNoPanic feeds odd arguments to every subcommand.
func TestNoPanic(t *testing.T) {
	odd := [][]string{
		{}, {"--"}, {"-json"}, {"--backend"}, {"--backend", ""}, {"--backend", "cuda", "--pr-body-file", ""},
		{"--backend", "rocm", "--pr-image-available"}, {"--file", "\x00"}, {"--megatron", "", "--patch", ""},
		{"--repo", "/nonexistent", "--backend", "cpu"}, {"--github-output", "/nonexistent/dir/out", "--backend", "cuda"},
	}
	for _, cmd := range []string{"image", "deps", "patch-check", "file-plan"} {
		for _, args := range odd {
			t.Run(cmd+" "+strings.Join(args, " "), func(t *testing.T) {
				code, _, _ := runCLI(t, nil, append([]string{cmd}, args...)...)
				if code < 0 || code > 2 {
					t.Errorf("wanted exit 0, 1 or 2, got %d", code)
				}
			})
		}
	}
}

// TestFilePlanCommandRegistry runs file-plan with the real registry: a broken
// file anywhere in the checkout fails it, as in file_run.py.
func TestFilePlanCommandRegistry(t *testing.T) {
	repo := filepath.Join("..", "..", "..", "testdata", "miles-repo")
	runCases(t, []cliCase{
		{name: "rocm only", args: []string{"file-plan", "--repo", repo, "--file", "tests/e2e/amd/test_amd_rollout.py"},
			wantStdout: "file: tests/e2e/amd/test_amd_rollout.py\nhw: rocm\nsuite: stage-c-4-gpu-mi350\nruns_on: [\"self-hosted\", \"amd\", \"mi350\", \"4gpu\"]\ncontainer_image: rocm/sgl-dev:miles-rocm720-mi35x\ntimeout_seconds: 2000\ncommand: python3 tests/e2e/amd/test_amd_rollout.py\n",
			wantOutput: "hw=rocm\nsuite=stage-c-4-gpu-mi350\nruns_on=[\"self-hosted\", \"amd\", \"mi350\", \"4gpu\"]\ncontainer_image=rocm/sgl-dev:miles-rocm720-mi35x\ntimeout_seconds=2000\n"},
		{name: "broken file elsewhere", args: []string{"file-plan", "--repo", filepath.Join("..", "..", "..", "testdata", "broken-repo"), "--file", "tests/fast/test_ok.py"},
			wantCode:   1,
			wantStderr: "::error file=tests/ci/test_none.py::tests/ci/test_none.py: No CI registry found in tests/ci/test_none.py; add a top-level call such as register_cpu_ci(est_time=60, suite=\"stage-b-cpu\")\n"},
	})
}

// imageUsage is what `image -h` prints on stdout.
func imageUsage(t *testing.T) string {
	t.Helper()
	_, stdout, _ := runCLI(t, nil, "image", "--help")
	if !strings.HasPrefix(stdout, "usage: miles-ci image --backend cuda|rocm") {
		t.Fatalf("wanted the usage on stdout, got %q", stdout)
	}
	return stdout
}

// offlineNote is the line deps prints for a #N ref it did not look up.
func offlineNote(ref string) string {
	return "  " + ref + ": lookup skipped: offline (no --pr and no GITHUB_TOKEN or GH_TOKEN)\n"
}
