from tests.ci.ci_register import register_cuda_ci
from tests.ci.metric_history import register_ci_gate

register_cuda_ci(est_time=300, suite="stage-c-4-gpu-h200", labels=["megatron"])

register_ci_gate(metric_key="train/ppo_kl")
register_ci_gate(
    metric_key="perf/tokens_per_s",
    steps="last",
    constraint={"rel_down": 0.1, "abs_floor_up": 1e9},
)


def test_grpo():
    pass
