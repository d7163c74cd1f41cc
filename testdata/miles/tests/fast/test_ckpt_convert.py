from tests.ci.ci_register import register_cpu_ci
from miles.utils import ckpt_convert

register_cpu_ci(est_time=3, suite="stage-b-cpu", disabled=None, nightly=False)


def test_convert_names():
    assert ckpt_convert.hf_to_mcore_name("model.embed_tokens.weight")
