del f(), x
