"""miles-ci test tree: a stand-in for the Miles package (verify_source_resolution.py finds it here).

Its modules are small pure-Python versions of the Miles functions the bundled
tests import, so every test runs in the stand-in images (which have no torch):
lists stand in for tensors.
"""
