"""``ast.parse`` that holds up when the host grades several submissions at once in threads.

CPython 3.11 keeps the recursion depth of its AST-to-object conversion in per-interpreter state, so
two threads in ``ast.parse`` at once can make one of them raise ``SystemError: AST constructor
recursion depth mismatch`` on a file that parses fine (python/cpython#106905, fixed in 3.12 and not
backported; seen here with eight concurrent gradings, where it turned a submission into a grader
traceback).

Not only the grader parses: in 3.11 the standard library's traceback formatting parses each source
line it prints (``traceback._extract_caret_anchors_from_line_segment``), ``inspect.signature``
parses the text signatures of builtins, and ``ast.literal_eval`` parses its argument, which
``numpy.load`` does for every ``.npy`` header it reads back from a sandbox, as do jinja2's lexer,
rich's markup and matplotlib's rc parser. All of them call the module attribute ``ast.parse`` at
call time, so ``install`` (run when ``grader`` is imported) replaces that attribute with
``guarded_parse``: one re-entrant lock serialises every parse in the process, grader's and
libraries' alike, and a clash with a parse that still bypasses it (a direct
``compile(..., ast.PyCF_ONLY_AST)``, as anyio does once at import) is retried.
"""

from __future__ import annotations

import ast
import threading
import time

_LOCK = threading.RLock()
#: Attempts at a parse that failed with the interpreter's recursion depth mismatch.
ATTEMPTS = 5
#: The interpreter's own ``ast.parse`` (kept across a second ``install`` or a reload of this module).
_RAW_PARSE = getattr(ast.parse, "__wrapped__", ast.parse)


def guarded_parse(source, filename="<unknown>", mode="exec", *, type_comments=False, feature_version=None):
    """``ast.parse`` with the same signature, serialised with every other parse of the process.

    Raises:
        SyntaxError: the source does not parse (never retried).
        SystemError: the depth mismatch persisted over ``ATTEMPTS`` tries (a fault of the host).
    """
    for attempt in range(ATTEMPTS):
        try:
            with _LOCK:
                return _RAW_PARSE(source, filename, mode, type_comments=type_comments,
                                  feature_version=feature_version)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == ATTEMPTS - 1:
                raise
            time.sleep(0.01 * (attempt + 1))
    raise AssertionError("unreachable")


guarded_parse.__wrapped__ = _RAW_PARSE  # type: ignore[attr-defined]


def install() -> None:
    """Make ``ast.parse`` (and so ``ast.literal_eval``, ``traceback``, ``inspect``, numpy's header
    reader) the guarded parse, process-wide. Idempotent."""
    ast.parse = guarded_parse


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, serialised with every other parse of the process.

    Raises:
        SyntaxError: the source does not parse (never retried).
        SystemError: the depth mismatch persisted over ``ATTEMPTS`` tries (a fault of the host).
    """
    return guarded_parse(source, filename)
