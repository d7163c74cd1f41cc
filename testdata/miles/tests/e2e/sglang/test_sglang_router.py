from tests.ci.ci_register import register_cuda_ci
import os

from tests.e2e.utils import execute_train

class _Fixture:
    register_cuda_ci(est_time=9999, suite="stage-c-2-gpu-h200", labels=["sglang"])


register_cuda_ci(est_time=150, suite="stage-c-2-gpu-h200", labels=["sglang"])


def test_sglang_router():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=2,
        megatron_model_type="qwen3-4B",
    )


if __name__ == "__main__":
    test_sglang_router()
