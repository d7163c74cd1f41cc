from tests.ci.ci_register import register_cpu_ci
import json

register_cpu_ci(est_time=5, suite="stage-a-cpu")


def test_labels_json_roundtrip():
    assert json.loads(json.dumps(["run-ci-megatron"])) == ["run-ci-megatron"]
