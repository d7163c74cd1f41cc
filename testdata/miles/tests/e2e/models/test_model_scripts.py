from tests.ci.ci_register import register_cuda_ci
import os

from tests.e2e.utils import execute_train

register_cuda_ci(est_time=60, suite=u"stage-b-2-gpu-h200", labels=["model-scripts"])


def test_model_scripts():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=2,
        megatron_model_type="qwen3-4B",
    )


if __name__ == "__main__":
    test_model_scripts()
