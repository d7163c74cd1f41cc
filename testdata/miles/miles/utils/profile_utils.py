"""Profiling switches."""

import contextlib
import cProfile


@contextlib.contextmanager
def maybe_profile(enabled):
    """Profile the block when enabled; otherwise do nothing."""
    if not enabled:
        yield None
        return
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield profiler
    finally:
        profiler.disable()
