from tests.ci.ci_register import register_cuda_ci
import os

from tests.e2e.utils import execute_train

register_cuda_ci(est_time=700, suite="stage-c-8-gpu-h200", labels=["sglang", "mooncake"], disabled="mooncake transfer engine unavailable on the H200 pool")


def test_sglang_mooncake():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=8,
        megatron_model_type="qwen3-30B-A3B",
    )


if __name__ == "__main__":
    test_sglang_mooncake()
