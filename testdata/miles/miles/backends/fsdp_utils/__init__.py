"""miles-ci test tree: miles.backends.fsdp_utils."""
