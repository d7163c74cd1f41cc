from tests.ci.metric_history.register import register_ci_gate  # noqa: F401
