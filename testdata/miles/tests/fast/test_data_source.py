from tests.ci.ci_register import register_cpu_ci
from miles.rollout.data_source import RolloutDataSource

register_cpu_ci \
    (est_time=8,
     suite="stage-a-cpu")

PROMPTS = r"register_cpu_ci(est_time=999, suite='stage-a-cpu')"


def test_data_source_len(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"prompt": "1+1"}\n')
    assert len(RolloutDataSource(str(path))) == 1
