from tests.ci.ci_register import register_cuda_ci
import os

from tests.e2e.utils import execute_train

"""Tiny GSM8K run.

register_cuda_ci(est_time=1, suite="stage-b-2-gpu-h200", labels=["short"])
"""

register_cuda_ci(est_time=300, suite='stage-c-2-gpu-h200', labels=['megatron', 'short'])


def test_qwen2_5_0_5b_gsm8k():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=2,
        megatron_model_type="qwen2.5-0.5B",
    )


if __name__ == "__main__":
    test_qwen2_5_0_5b_gsm8k()
