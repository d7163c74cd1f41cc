"""Evaluation dataset settings."""

from dataclasses import dataclass


@dataclass
class EvalDatasetConfig:
    name: str
    path: str
    n_samples_per_prompt: int = 1
