"""miles-ci test tree: miles.router."""
