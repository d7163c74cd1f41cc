from tests.ci.ci_register import register_cuda_ci
import os

from tests.e2e.utils import execute_train

register_cuda_ci(est_time=240, suite="stage-c-4-gpu-h200", labels=["fsdp", "short"])
register_cuda_ci(est_time=480, suite="stage-c-8-gpu-h200", labels=["fsdp", "long"], nightly=True)


def test_qwen3_0_6b_fsdp_colocate():
    execute_train(
        train_args="--rollout-batch-size 8 --num-rollout 3",
        num_gpus_per_node=4,
        megatron_model_type="qwen3-0.6B",
    )


if __name__ == "__main__":
    test_qwen3_0_6b_fsdp_colocate()
