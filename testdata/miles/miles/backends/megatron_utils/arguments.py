"""Megatron-LM arguments miles sets for its runs."""

DEFAULTS = {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1, "context_parallel_size": 1}


def set_default_megatron_args(args):
    """Fill the parallelism defaults args leaves out (a dict)."""
    for key, value in DEFAULTS.items():
        args.setdefault(key, value)
    return args
