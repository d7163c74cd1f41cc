"""Split sequences into partitions of about equal total length."""


def get_seqlen_balanced_partitions(seqlens, k_partitions, equal_size):
    """Return k_partitions lists of indices into seqlens, longest first to the lightest partition."""
    parts = [[] for _ in range(k_partitions)]
    loads = [0] * k_partitions
    per_part = -(-len(seqlens) // k_partitions)
    for i in sorted(range(len(seqlens)), key=lambda i: -seqlens[i]):
        open_parts = [p for p in range(k_partitions) if not equal_size or len(parts[p]) < per_part]
        p = min(open_parts, key=lambda p: (loads[p], p))
        parts[p].append(i)
        loads[p] += seqlens[i]
    return parts
