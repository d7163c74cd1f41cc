from tests.ci.ci_register import register_cuda_ci
import os

from tests.e2e.utils import execute_train

def _unused():
    register_cuda_ci(est_time=9999, suite="stage-c-4-gpu-h200", labels=["sglang"])


register_cuda_ci(est_time=330, suite="stage-c-4-gpu-h200", labels=["sglang", "weight-update"])


def test_sglang_weight_update():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=4,
        megatron_model_type="qwen3-4B",
    )


if __name__ == "__main__":
    test_sglang_weight_update()
