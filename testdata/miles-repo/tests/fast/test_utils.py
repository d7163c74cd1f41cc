def test_utils():
    assert True
