from tests.ci.ci_register import register_rocm_ci
import os

from tests.e2e.utils import execute_train

register_rocm_ci(est_time=700, suite="stage-c-4-gpu-mi350", labels=["amd", "precision"], disabled="FIXME: re-enable once this case passes")


def test_precision_amd():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=4,
        megatron_model_type="qwen3-4B",
    )


if __name__ == "__main__":
    test_precision_amd()
