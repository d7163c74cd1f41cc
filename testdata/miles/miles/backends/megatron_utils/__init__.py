"""miles-ci test tree: miles.backends.megatron_utils."""
