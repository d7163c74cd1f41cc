from tests.ci.ci_register import register_cuda_ci
import os

from tests.e2e.utils import execute_train

_ = lambda: register_cuda_ci(est_time=9999, suite="stage-c-4-gpu-h200", labels=["fsdp"])
register_cuda_ci(est_time=420, suite="stage-c-4-gpu-h200", labels=["fsdp", "precision"])


def test_fsdp_true_on_policy():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=4,
        megatron_model_type="qwen3-0.6B",
    )


if __name__ == "__main__":
    test_fsdp_true_on_policy()
