from tests.ci.ci_register import register_cuda_ci
import os

from tests.e2e.utils import execute_train

# A suite with no matching job is valid; it simply never runs.
register_cuda_ci(est_time=100, suite="stage-d-8-gpu-b200", labels=["long"])


def test_unscheduled_b200():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=8,
        megatron_model_type="qwen3-4B",
    )


if __name__ == "__main__":
    test_unscheduled_b200()
