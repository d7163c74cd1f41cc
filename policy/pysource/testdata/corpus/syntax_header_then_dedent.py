# A block header followed by a line that closes the blocks around it, a try's
# among them: CPython wants the header's INDENT first, and says so, before it
# closes the try.
try:
    try:
        for x in y:
z()
