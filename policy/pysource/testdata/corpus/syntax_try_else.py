# After a try's block only except, except* or finally may stand: an else there
# is CPython's "expected 'except' or 'finally' block", not "invalid syntax".
try:
    a()
else:
    b()
