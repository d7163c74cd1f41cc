"""miles-ci test tree: miles.utils."""
