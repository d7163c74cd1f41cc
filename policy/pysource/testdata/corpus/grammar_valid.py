import os, sys as system
from . import a
from .. b import (c, d as e,)
from x import *
x: int = 1
(y): int
z.w: list[int] = [1]
a = b = c = yield_ = 1
a, *b = [1, 2, 3]
[a, (b, c)] = 1, (2, 3)
() = []
x += 1; x -= 1; x @= m; x //= 2; x **= 2
del a, (b), [c], d.e, f[0]
assert x, "msg"
raise
raise E from None
global g
nonlocal_ok = 1
def f(a, /, b, *, c, d=1, **e) -> int:
    nonlocal_ = 2
    return a
def g(*args: int, **kw: str): pass
async def h():
    async with a as b, c:
        pass
    async for x in y:
        await z
    return [i async for i in a if await i]
lambda: 0
lambda x, /, y=1, *z, w, **k: 0
f(*a, *b, c=1, *d, **e, g=2)
f(x for x in y)
f(a, b=1, *c, **d)
x = [*a, *b], {**a, 'b': 1}, {*a, 1}, (*a, 1)
x = a if b else c if d else e
x = not a and b or not c
x = a < b <= c != d is not e not in f in g
x = -a ** -b
x = a[1:2, ::3, *b]
x = a[x := 1]
x = {(k := 1): v for v in w}
x = [y for y in z if (w := y)]
x = 1if y else 2
x = 0x1f or 0o7 or 0b1 or 1_000.5e-3j
x = ...
x = f'{a!r:>{w}} {b=} {c = !s} {{}} {d:%Y-%m-%d}'
x = rf'\{a}' + fr"{b}" + Rb'c' + U"d"
x = "\N{LATIN SMALL LETTER A}" '\x41' "\u0041" "\U00000041" "\d"
if a:
    pass
elif b:
    pass
else:
    pass
for x in y:
    break
else:
    continue_ = 1
while x:
    continue
else:
    pass
try:
    pass
except (A, B) as e:
    pass
except C:
    pass
else:
    pass
finally:
    pass
try:
    pass
except* A:
    pass
with (a as b, c as d,):
    pass
with (a, b) as c:
    pass
@dec
@dec.attr(1)
@(lambda f: f)
class A(B, metaclass=M):
    x = 1
match command.split():
    case [action]:
        pass
    case [action, obj] if obj:
        pass
    case Point(x=0, y=0) | Point(1, 2):
        pass
    case {"a": 1, **rest}:
        pass
    case [1, *_] | (2, *others) | -1 | 1 + 2j | "s" "t" | None | a.b:
        pass
    case _:
        pass
match = 1
case = match
_ = case
print(match, case)
register_cpu_ci(1, 'stage-b-cpu')
