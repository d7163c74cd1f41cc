from tests.ci.ci_register import register_rocm_ci
import os

from tests.e2e.utils import execute_train

register_rocm_ci(est_time=1800.0, suite="nightly-stage-c-4-gpu-mi350", labels=["amd", "qwen35"])
register_rocm_ci(est_time=1800, suite="stage-c-4-gpu-mi350", labels=["amd", "qwen35"], nightly=True)


def test_qwen35_amd():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=4,
        megatron_model_type="qwen3.5-35B-A3B",
    )


if __name__ == "__main__":
    test_qwen35_amd()
