from tests.ci.ci_register import register_rocm_ci
import os

from tests.e2e.utils import execute_train

register_rocm_ci(est_time=600, suite="nightly-stage-c-2-gpu-mi350", labels=["amd", "sglang"])


def test_sglang_amd():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=2,
        megatron_model_type="qwen3-4B",
    )


if __name__ == "__main__":
    test_sglang_amd()
