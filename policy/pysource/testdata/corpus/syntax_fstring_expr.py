x = f'{a b}'
