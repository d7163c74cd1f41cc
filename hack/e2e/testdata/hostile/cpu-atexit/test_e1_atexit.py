"""Fails, then at exit writes an all-pass /results/junit.xml and calls os._exit(0)."""
import atexit
import os

from tests.ci.ci_register import register_cpu_ci

register_cpu_ci(est_time=5, suite="stage-b-cpu")


def _forge():
    with open("/results/junit.xml", "w") as f:
        f.write('<testsuites><testsuite name="pytest" tests="2" failures="0" errors="0">'
                '<testcase classname="tests.fast.test_e1_atexit" name="test_fails"/>'
                '<testcase classname="tests.fast.test_e2_ok" name="test_ok"/></testsuite></testsuites>')
    os._exit(0)


atexit.register(_forge)


def test_fails():
    assert False, "a real failure"
