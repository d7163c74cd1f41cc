"""The rollout router: hands requests to the inference workers in turn.

The bundled tree keeps one bug on purpose, so that a pull request labelled
run-ci-sglang shows a failing shard (docs/ci.md): the round robin starts at the
last worker instead of the first, which tests/fast/router/test_router.py catches.
"""


class MilesRouter:
    def __init__(self, worker_urls):
        if not worker_urls:
            raise ValueError("a router needs at least one worker")
        self.worker_urls = list(worker_urls)
        self.turn = 0

    def next_worker(self):
        self.turn = (self.turn - 1) % len(self.worker_urls)
        return self.worker_urls[self.turn]
