from tests.ci.ci_register import register_rocm_ci
import os

from tests.e2e.utils import execute_train

register_rocm_ci(est_time=2400, suite="nightly-stage-c-8-gpu-mi350", labels=["amd", "ft-long"], nightly=True)


def test_ft_amd():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=8,
        megatron_model_type="qwen3-30B-A3B",
    )


if __name__ == "__main__":
    test_ft_amd()
