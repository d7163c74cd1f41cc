# Not discovered: the folder name starts with a dot. It has no registration.
def test_scratch():
    assert True
