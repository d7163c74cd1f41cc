from tests.ci.ci_register import register_rocm_ci
import os

from tests.e2e.utils import execute_train

register_rocm_ci(est_time=900, suite="stage-c-4-gpu-mi350", labels=["amd", "megatron"])


def test_qwen3_4b_amd():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=4,
        megatron_model_type="qwen3-4B",
    )


if __name__ == "__main__":
    test_qwen3_4b_amd()
