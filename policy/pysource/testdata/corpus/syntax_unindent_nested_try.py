# A bad unindent that would close a try's body and then the try around it:
# CPython checks the level before it hands on any DEDENT, so the error is the
# unindent's, not "expected 'except' or 'finally' block".
def f():
    try:
        try:
            a()
      except ValueError:
            pass
    finally:
        b()
