"""miles-ci test tree: a stand-in for the Miles package (verify_source_resolution.py finds it here)."""
