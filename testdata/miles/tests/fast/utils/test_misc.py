from miles.utils.misc import load_function


def test_load_function_roundtrip():
    fn = load_function("os.path.join")
    assert fn("a", "b") == "a/b"
