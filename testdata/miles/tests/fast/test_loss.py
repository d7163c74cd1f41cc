"""Policy-loss unit tests.

Registered twice: the quick half in stage-a-cpu, the numerically heavy half in
stage-b-cpu.
"""

from tests.ci.ci_register import register_cpu_ci

import math

register_cpu_ci(est_time=5, suite="stage-a-cpu")
register_cpu_ci(est_time=60, suite="stage-b-cpu", labels=None)


def test_ppo_clip_loss_is_finite():
    ratio = [0.5, 1.0, 2.0]
    adv = [1.0, -1.0, 1.0]
    loss = -sum(min(r * a, min(max(r, 0.8), 1.2) * a) for r, a in zip(ratio, adv)) / len(ratio)
    assert math.isfinite(loss)
