package policy

import (
	"slices"
	"strings"
)

// stepEnvPrefixes are the prefixes of the variables a run workflow may set
// through $GITHUB_ENV for a stage container: the GPU, collective and
// framework tunables Miles' workflows set for a runner (NVSHMEM_HCA_LIST on
// 4-GPU H200). Anything else (PATH, LD_PRELOAD, PYTHONPATH, GITHUB_ACTIONS,
// HOME, ...) would change how every later step runs, miles-ci's own
// included, so it is not applied and lint names it.
var stepEnvPrefixes = []string{"NVSHMEM_", "NCCL_", "NVTE_", "TORCH_", "PYTORCH_", "CUDA_", "CUBLAS_", "CUDNN_",
	"HSA_", "HIP_", "ROCM_", "MIOPEN_", "RCCL_", "OMP_", "MKL_", "TOKENIZERS_", "RAY_", "SGLANG_", "MEGATRON_", "MILES_", "WANDB_"}

// stepEnvRefused are names under an allowed prefix that miles-ci sets
// itself, or that hold a secret or select the GPUs: the workflow's step
// must not change them.
var stepEnvRefused = []string{"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "SGLANG_SOURCE_ROOT",
	"MEGATRON_SOURCE_ROOT", "MILES_HARDWARE_PLATFORM", "MILES_TEST_ENABLE_INFINITE_RUN", "WANDB_API_KEY"}

// StepEnvAllowed reports whether a run workflow may set name through
// $GITHUB_ENV for a stage container.
func StepEnvAllowed(name string) bool {
	if slices.Contains(stepEnvRefused, name) || strings.HasPrefix(name, "MILES_CI_") {
		return false
	}
	return slices.ContainsFunc(stepEnvPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}
