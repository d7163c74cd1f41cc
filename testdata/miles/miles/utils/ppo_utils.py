"""Generalised advantage estimation, computed chunk by chunk (lists stand in for tensors)."""


def chunked_gae(rewards, values, gamma, lam, chunk_size):
    """Return (advantages, returns) of each row of rewards and values.

    The recursion runs backwards over the sequence in chunks of chunk_size
    steps, carrying the running advantage across chunk borders, so the result
    is the same as one pass over the whole row.
    """
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    advantages, returns = [], []
    for r, v in zip(rewards, values):
        n = len(r)
        adv = [0.0] * n
        running = 0.0
        for end in range(n, 0, -chunk_size):
            for t in range(end - 1, max(end - chunk_size, 0) - 1, -1):
                next_value = v[t + 1] if t + 1 < n else 0.0
                delta = r[t] + gamma * next_value - v[t]
                running = delta + gamma * lam * running
                adv[t] = running
        advantages.append(adv)
        returns.append([a + b for a, b in zip(adv, v)])
    return advantages, returns
