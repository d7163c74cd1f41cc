x = 'a' b'b'
