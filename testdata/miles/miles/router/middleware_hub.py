"""Router middlewares."""


class RadixTreeMiddleware:
    """Routes a prompt to the worker that served its longest cached prefix."""

    def __init__(self):
        self.prefixes = {}

    def remember(self, prompt, worker):
        self.prefixes[prompt] = worker

    def route(self, prompt, default):
        best = max((p for p in self.prefixes if prompt.startswith(p)), key=len, default=None)
        return self.prefixes[best] if best is not None else default
