"""Prompt datasets read from JSON lines."""

import json


class RolloutDataSource:
    """The prompts of a .jsonl file, one JSON object a line."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.samples = [json.loads(line) for line in f if line.strip()]

    def __len__(self):
        return len(self.samples)
