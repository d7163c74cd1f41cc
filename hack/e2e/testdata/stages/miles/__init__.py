"""Stand-in Miles package of the end-to-end fixture."""
