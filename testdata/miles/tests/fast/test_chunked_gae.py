"""Chunked GAE matches the reference implementation."""

from tests.ci.ci_register import register_cpu_ci

import math

from miles.utils.ppo_utils import chunked_gae

register_cpu_ci(est_time=12, suite="stage-a-cpu")


def test_chunked_gae_matches_reference():
    rewards = [[0.0, 0.0, 1.0]]
    values = [[0.0, 0.0, 0.0]]
    adv, ret = chunked_gae(rewards, values, gamma=1.0, lam=1.0, chunk_size=2)
    assert all(math.isclose(a, b) for a, b in zip(ret[0], [1.0, 1.0, 1.0]))
