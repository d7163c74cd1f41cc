"""The B200 pool planner (stand-in for the B200 pool line's tests/ci/b200_plan.py; it plans nothing).

Its presence, with a top-level plan_jobs, declares the pool: every file the two
B200 suites select is one job at its own GPU count, in batches of at most
MAX_BATCH_MINUTES.
"""

MAX_BATCH_MINUTES = 23 * 60


def plan_jobs(registrations, suites, cadence, labels, match_all_labels=False):
    raise NotImplementedError("a stand-in: miles-ci plans this pool itself")
