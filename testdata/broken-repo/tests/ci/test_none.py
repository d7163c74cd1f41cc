def test_nothing_registered():
    pass
