"""Stand-in of Miles' tests/ci/metric_history/gate.py: the signature miles-ci reads."""


def evaluate_gate(test_filename, merged_record_path, store, *, registry=None, history_limit: int = 20):
    raise NotImplementedError("miles-ci's fixture: only the signature is read")
