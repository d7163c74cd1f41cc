"""Helpers shared by the e2e tests (not a test file)."""

import subprocess


def execute_train(train_args, num_gpus_per_node, megatron_model_type):
    cmd = ["python", "train.py", *train_args.split(), "--num-gpus-per-node", str(num_gpus_per_node)]
    subprocess.run(cmd, check=True)
