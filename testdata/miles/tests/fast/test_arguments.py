import argparse


def build_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rollout-batch-size", type=int, default=8)
    return parser


def test_default_batch_size():
    args = build_parser().parse_args([])
    assert args.rollout_batch_size == 8
