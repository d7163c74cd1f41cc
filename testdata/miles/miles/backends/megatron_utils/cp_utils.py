"""Context parallelism: each rank's slice of a sequence."""


def slice_with_cp(x, cp_rank, cp_size):
    """Rank cp_rank's part of x when the sequence is split into 2*cp_size chunks, load-balanced."""
    if not 0 <= cp_rank < cp_size:
        raise ValueError(f"cp_rank {cp_rank} is outside 0..{cp_size - 1}")
    if cp_size == 1:
        return list(x)
    chunk = len(x) // (2 * cp_size)
    first = x[cp_rank * chunk:(cp_rank + 1) * chunk]
    mirror = 2 * cp_size - 1 - cp_rank
    return list(first) + list(x[mirror * chunk:(mirror + 1) * chunk])
