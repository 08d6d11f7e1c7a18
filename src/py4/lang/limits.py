"""How much work one program may ask of the front end (a denial-of-service bound).

The front end runs in Boa's trusted parent on hostile text, so its cost per program must
be bounded. Source size bounds most of it linearly (``compile.MAX_SOURCE_CHARS``), but a
few constructs cost CPython's parser or compiler far more than their characters, or grow
quadratically with their size, and are bounded one by one here. Each limit is far above
anything a study program writes (a few hundred lines) and is refused with a diagnostic
that names it (P4-00, ``diagnostics.MESSAGES``):

- i-string fields in one program: CPython 3.11 re-parses every field expression with a
  parser of its own (~20 µs a field, more in long i-strings); 33,000 fields in 99,000
  characters took 0.8-2.8 s. Counted by the token pass, *before* parsing.
- arguments of one call (or bases and keywords of one class, or sub-patterns of one class
  pattern): the compiler checks keyword names pairwise (8,000 keywords: 0.6 s).
- functions, lambdas, classes and comprehensions in one program (each is a code object):
  the compiler merges equal code objects with a search that is quadratic in their number
  (8,000 ``fun: 1``: 1 s).
- names one ``case`` pattern binds: the compiler checks each new name against all the
  earlier ones (8,000 captures: 13 s).
Nesting depth is bounded by the interpreter (its parser's and compiler's recursion
limits), reported as ``too_deep``.
"""

from __future__ import annotations

MAX_ISTRING_FIELDS = 2_000
MAX_CALL_ARGUMENTS = 255  # Python 3.6's own limit on a call's arguments
MAX_PATTERN_CAPTURES = 100
MAX_CODE_OBJECTS = 1_000
