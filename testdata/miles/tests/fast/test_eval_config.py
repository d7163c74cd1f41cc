from tests.ci.ci_register import register_cpu_ci
from miles.utils.eval_config import EvalDatasetConfig

register_cpu_ci(est_time=12, suite="stage-a-cpu", labels=["eval"])


def test_eval_dataset_defaults():
    cfg = EvalDatasetConfig(name="gsm8k", path="/root/datasets/gsm8k.jsonl")
    assert cfg.n_samples_per_prompt == 1
