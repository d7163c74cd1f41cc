"""Numerics kernels (pure Python here)."""

import math


def log_softmax(row):
    """The log-softmax of a list of numbers."""
    top = max(row)
    total = math.log(sum(math.exp(x - top) for x in row)) + top
    return [x - total for x in row]


def fused_logsoftmax(rows):
    """log_softmax of each row, in one pass over the rows."""
    return [log_softmax(row) for row in rows]
