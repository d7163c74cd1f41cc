def test_top_level_is_not_a_root():
    assert True
