"""Stand-in of Miles' tests/ci/metric_history/register.py: its defaults table."""


def register_ci_gate(*, metric_key, steps=None, constraint=None, enforce=False, allowlist_reason=None):
    return None


GATE_DEFAULTS: dict[str, dict] = {
    "train/ppo_kl": {
        "steps": "all",
        "constraint": {"rel_up": 0.5, "abs_floor_up": 0.02, "rel_down": 0.8, "abs_floor_down": 0.02},
    },
    "rollout/raw_reward": {
        "steps": "all",
        "constraint": {"rel_up": 0.5, "abs_floor_up": 0.05, "rel_down": 0.2, "abs_floor_down": 0.05},
    },
}
