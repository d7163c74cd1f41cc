from tests.ci.ci_register import register_cuda_ci
import os

from tests.e2e.utils import execute_train

register_cuda_ci(
    est_time=600,  # ~10 min on 4xH200
    suite="stage-c-4-gpu-h200",
    labels=["megatron", "ckpt"],
)


def test_glm4_9b():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=4,
        megatron_model_type="glm4-9B",
    )


if __name__ == "__main__":
    test_glm4_9b()
