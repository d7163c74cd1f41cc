from tests.ci.ci_register import register_cpu_ci
from pathlib import Path

import re

register_cpu_ci(est_time=1, suite="stage-a-cpu")


def test_workflows_parse():
    for path in Path(".github/workflows").glob("*.yml"):
        assert re.search(r"^jobs:", path.read_text(), re.MULTILINE)
