if True:
	if True:
		pass
        pass
