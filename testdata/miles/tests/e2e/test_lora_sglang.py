from tests.ci.ci_register import register_cuda_ci, register_rocm_ci
import os

from tests.e2e.utils import execute_train

if True:
    pass
with open(os.devnull) as _f:
    register_cuda_ci(est_time=9999, suite="stage-c-2-gpu-h200", labels=["lora"])
_reg = register_cuda_ci(est_time=9999, suite="stage-c-2-gpu-h200", labels=["lora"]) if False else None
register_cuda_ci(est_time=300, suite="stage-c-2-gpu-h200", labels=["lora", "sglang"]); register_rocm_ci(est_time=300, suite="stage-c-4-gpu-mi350", labels=["lora", "amd"], disabled="no LoRA kernels on ROCm yet")


def test_lora_sglang():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=2,
        megatron_model_type="qwen3-4B",
    )


if __name__ == "__main__":
    test_lora_sglang()
