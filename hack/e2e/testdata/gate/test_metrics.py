"""Logs two metrics as Miles' CiHistoryBackend records them (one JSONL file of
the process in the folder the harness gives the attempt), then passes: the
metric gate (rules §16) judges them after the run."""
import json
import os

from tests.ci.ci_register import register_cuda_ci
from tests.ci.metric_history import register_ci_gate

register_cuda_ci(est_time=10, suite="stage-b-2-gpu-h200", labels=["short"])

register_ci_gate(metric_key="train/ppo_kl")
register_ci_gate(metric_key="perf/loss", steps="last", constraint={"rel_up": 0.5, "rel_down": 0.5})


def main():
    folder = os.environ["MILES_CI_GATE_RECORD_DIR"]
    with open(os.path.join(folder, f"{os.getpid()}.jsonl"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"metric": "train/ppo_kl", "series": [[0, 0.01], [1, 0.012]]}) + "\n")
        f.write(json.dumps({"metric": "perf/loss", "series": [[0, 2.5], [1, 2.0]]}) + "\n")
    print("metric records written to", folder)


if __name__ == "__main__":
    main()
