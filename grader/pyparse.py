"""``ast.parse`` that holds up when the host grades several submissions at once in threads.

CPython 3.11 keeps the recursion depth of its AST-to-object conversion in per-interpreter state, so
two threads in ``ast.parse`` at once can make one of them raise ``SystemError: AST constructor
recursion depth mismatch`` on a file that parses fine (python/cpython#106905, fixed in 3.12; seen
here with eight concurrent gradings, where it turned a submission into a grader traceback). Every
``ast.parse`` of the grader goes through ``parse``: one lock serialises them, and the rare clash with
a parse the grader does not own (the standard library's traceback formatting parses source lines in
3.11) is retried.
"""

from __future__ import annotations

import ast
import threading
import time

_LOCK = threading.Lock()
#: Attempts at a parse that failed with the interpreter's recursion depth mismatch.
ATTEMPTS = 5


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, serialised with every other parse of the grader.

    Raises:
        SyntaxError: the source does not parse (never retried).
        SystemError: the depth mismatch persisted over ``ATTEMPTS`` tries (a fault of the host).
    """
    for attempt in range(ATTEMPTS):
        try:
            with _LOCK:
                return ast.parse(source, filename)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == ATTEMPTS - 1:
                raise
            time.sleep(0.01 * (attempt + 1))
    raise AssertionError("unreachable")
