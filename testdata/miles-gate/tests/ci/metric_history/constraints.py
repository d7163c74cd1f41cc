"""Stand-in of Miles' tests/ci/metric_history/constraints.py: its schema table."""

CONSTRAINT_SCHEMA: dict[str, tuple[str, bool, object]] = {
    "rel_up": ("float_nonneg", False, 0.0),
    "abs_floor_up": ("float_nonneg", False, 0.0),
    "rel_down": ("float_nonneg", False, 0.0),
    "abs_floor_down": ("float_nonneg", False, 0.0),
}
