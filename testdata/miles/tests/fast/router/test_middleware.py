"""Router middleware tests.

ROCm variants would use register_rocm_ci, but this file needs no GPU and is
collected implicitly from tests/fast.
"""

from miles.router.middleware_hub import RadixTreeMiddleware


def test_middleware_constructs():
    assert RadixTreeMiddleware is not None
