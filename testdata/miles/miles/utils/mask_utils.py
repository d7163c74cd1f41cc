"""Loss masks."""


def get_response_lengths(mask):
    """The number of response tokens (mask 1) of each row."""
    return [sum(1 for m in row if m) for row in mask]
