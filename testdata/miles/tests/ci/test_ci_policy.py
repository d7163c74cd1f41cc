import json

register_cpu_ci(est_time=5, suite="stage-a-cpu")


def test_labels_json_roundtrip():
    assert json.loads(json.dumps(["run-ci-megatron"])) == ["run-ci-megatron"]
