"""Chunked GAE matches the reference implementation."""

from tests.ci.ci_register import register_cpu_ci

import torch

from miles.utils.ppo_utils import chunked_gae

register_cpu_ci(est_time=12, suite="stage-a-cpu")


def test_chunked_gae_matches_reference():
    rewards = torch.tensor([[0.0, 0.0, 1.0]])
    values = torch.zeros_like(rewards)
    adv, ret = chunked_gae(rewards, values, gamma=1.0, lam=1.0, chunk_size=2)
    assert torch.allclose(ret, torch.tensor([[1.0, 1.0, 1.0]]))
