

   
# only comments
	
