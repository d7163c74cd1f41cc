"""miles-ci test tree: miles.backends."""
