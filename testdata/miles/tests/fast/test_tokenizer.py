import json

TEMPLATE = rb'''{"role": "user", "content": "hi"}'''
GREETING = f"{json.dumps({'a': 1})}"
BYTES = b'\x00\x01'


def test_template_is_json():
    assert json.loads(TEMPLATE.decode())["role"] == "user"
    assert GREETING == '{"a": 1}'
    assert len(BYTES) == 2
