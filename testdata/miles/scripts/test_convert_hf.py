def test_convert():
    assert True
