package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
)

// badFileHome places each testdata/bad file in a repository: the fast_ ones
// under tests/fast/, the rest under tests/e2e/.
func badFileHome(name string) string {
	base := strings.TrimSuffix(name, ".py")
	if rest, ok := strings.CutPrefix(base, "fast_"); ok {
		return "tests/fast/test_" + rest + ".py"
	}
	return "tests/e2e/test_" + base + ".py"
}

// TestBadFiles checks the exact message of every error rule of rules §2, one
// file per rule in testdata/bad.
func TestBadFiles(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"starred.py", "tests/e2e/test_starred.py: starred arguments are not supported in register_cuda_ci() (line 2); pass est_time and suite as literal values"},
		{"too_many_positional.py", "tests/e2e/test_too_many_positional.py: too many positional arguments in register_cuda_ci(); only ['est_time', 'suite'] may be positional (labels and later are keyword-only) (line 1); pass labels=, nightly= and disabled= by keyword"},
		{"kwargs.py", "tests/e2e/test_kwargs.py: **kwargs are not supported in register_cuda_ci() (line 2); pass each argument by its own keyword"},
		{"unknown_keyword.py", "tests/e2e/test_unknown_keyword.py: unknown argument 'num_gpus' in register_cuda_ci() (line 1); valid arguments are est_time, suite, labels, nightly and disabled"},
		{"duplicated_keyword.py", "tests/e2e/test_duplicated_keyword.py: duplicated argument 'est_time' in register_cuda_ci() (line 1); give each argument once"},
		{"not_literal.py", `tests/e2e/test_not_literal.py: est_time in register_cuda_ci() must be a literal constant (line 1); write the value itself, e.g. register_cuda_ci(est_time=600, suite="stage-c-2-gpu-h200", labels=["megatron"])`},
		{"negative_not_literal.py", `tests/e2e/test_negative_not_literal.py: est_time in register_cuda_ci() must be a literal constant (line 1); write the value itself, e.g. register_cuda_ci(est_time=600, suite="stage-c-2-gpu-h200", labels=["megatron"])`},
		{"missing_est_time.py", "tests/e2e/test_missing_est_time.py: est_time is required in register_cuda_ci() (line 1); add est_time=SECONDS, e.g. est_time=300"},
		{"missing_suite.py", `tests/e2e/test_missing_suite.py: suite is required in register_cuda_ci() (line 1); add suite="STAGE", e.g. suite="stage-a-cpu"`},
		{"est_time_not_number.py", "tests/e2e/test_est_time_not_number.py: est_time must be a number in register_cuda_ci() (line 1); give the estimate in seconds, e.g. est_time=300"},
		{"suite_not_string.py", `tests/e2e/test_suite_not_string.py: suite must be a string in register_cuda_ci() (line 1); e.g. suite="stage-a-cpu"`},
		{"nightly_not_bool.py", "tests/e2e/test_nightly_not_bool.py: nightly must be a boolean in register_cuda_ci() (line 1); write nightly=True or nightly=False"},
		{"disabled_not_string.py", `tests/e2e/test_disabled_not_string.py: disabled must be a string or None in register_cuda_ci() (line 1); write the reason, e.g. disabled="flaky on H200, see #123"`},
		{"labels_not_list.py", `tests/e2e/test_labels_not_list.py: labels in register_cuda_ci() must be a list of string literals or None (got Tuple) (line 1); write labels as a list of strings, e.g. labels=["megatron", "short"]`},
		{"labels_element_not_literal.py", `tests/e2e/test_labels_element_not_literal.py: labels in register_cuda_ci() must be a list of string literals (non-literal element) (line 2); write labels as a list of strings, e.g. labels=["megatron", "short"]`},
		{"labels_element_not_string.py", `tests/e2e/test_labels_element_not_string.py: labels in register_cuda_ci() must be a list of string literals (got int element) (line 1); write labels as a list of strings, e.g. labels=["megatron", "short"]`},
		{"unknown_label.py", "tests/e2e/test_unknown_label.py: unknown labels ['h200-only'] in register_cuda_ci(); valid labels: [amd, ckpt, eval, fsdp, ft-long, ft-short, fully-async, long, lora, megatron, miles-plugin, model-scripts, mooncake, precision, qwen35, replay, sglang, short, weight-update]. To add a new label: edit tests/ci/labels.py + create matching `run-ci-<label>` in GitHub repo Settings -> Labels. (line 1); use one of the valid labels"},
		{"no_label_cuda.py", `tests/e2e/test_no_label_cuda.py: labels in register_cuda_ci() must contain at least one domain label (line 1); add labels=[...] with a label from [amd, ckpt, eval, fsdp, ft-long, ft-short, fully-async, long, lora, megatron, miles-plugin, model-scripts, mooncake, precision, qwen35, replay, sglang, short, weight-update], e.g. labels=["megatron"]`},
		{"no_label_rocm.py", `tests/e2e/test_no_label_rocm.py: labels in register_rocm_ci() must contain at least one domain label (line 1); add labels=[...] with a label from [amd, ckpt, eval, fsdp, ft-long, ft-short, fully-async, long, lora, megatron, miles-plugin, model-scripts, mooncake, precision, qwen35, replay, sglang, short, weight-update], e.g. labels=["megatron"]`},
		{"no_registry.py", `tests/e2e/test_no_registry.py: No CI registry found in tests/e2e/test_no_registry.py; add a top-level call such as register_cuda_ci(est_time=600, suite="stage-c-2-gpu-h200", labels=["megatron"])`},
		{"invalid_python.py", "tests/e2e/test_invalid_python.py: not valid Python: invalid syntax (line 1); fix the syntax so that python -c 'import ast; ast.parse(open(FILE).read())' accepts the file"},
		{"fast_cuda.py", "tests/fast/test_cuda.py: register_cuda_ci is forbidden in tests/fast/; move the file to tests/fast-gpu/ instead (line 1)"},
		{"fast_rocm.py", "tests/fast/test_rocm.py: register_rocm_ci is forbidden in tests/fast/; move the file to tests/fast-gpu/ instead (line 1)"},
		{"fast_mention.py", "tests/fast/test_mention.py: file mentions register_cpu_ci or register_cuda_ci textually but no top-level call was parsed; check for aliased import, non-toplevel call, or attribute access; call register_cpu_ci(...) by its bare name at the top level of the module, or remove the mention"},
		{"fast_nested.py", "tests/fast/test_nested.py: file mentions register_cpu_ci or register_cuda_ci textually but no top-level call was parsed; check for aliased import, non-toplevel call, or attribute access; call register_cpu_ci(...) by its bare name at the top level of the module, or remove the mention"},
	}
	entries, err := os.ReadDir(filepath.Join("..", "testdata", "bad"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(tests) {
		t.Errorf("testdata/bad has %d files, the table %d: give every file a case", len(entries), len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("..", "testdata", "bad", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			// A valid neighbour: the error must come from the bad file alone.
			testfiles.Write(t, root, "tests/e2e/test_aaa_ok.py", `register_cpu_ci(1, "stage-b-cpu")`+"\n")
			testfiles.Write(t, root, badFileHome(tc.file), string(src))
			_, err = LoadRegistry(root)
			if err == nil {
				t.Fatalf("wanted error %q, got none", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("wanted %q,\n got %q", tc.want, err.Error())
			}
		})
	}
}
