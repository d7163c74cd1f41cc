"""miles-ci test tree: miles.rollout."""
