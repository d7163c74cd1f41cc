def test_cached():
    assert True
