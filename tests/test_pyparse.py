"""grader.pyparse: the grader's ast.parse, safe when several gradings run at once in threads."""

from __future__ import annotations

import ast
import threading

import pytest

from grader import pyparse


def test_a_depth_mismatch_is_retried_and_a_syntax_error_is_not(monkeypatch):
    calls = []
    real = pyparse._RAW_PARSE

    def flaky(source, filename="<unknown>", mode="exec", **kwargs):
        calls.append(source)
        if len(calls) < 3:
            raise SystemError("AST constructor recursion depth mismatch (before=27, after=17)")
        return real(source, filename)

    monkeypatch.setattr(pyparse, "_RAW_PARSE", flaky)
    tree = pyparse.parse("x = 1\n")
    assert isinstance(tree.body[0], ast.Assign) and len(calls) == 3
    monkeypatch.setattr(pyparse, "_RAW_PARSE", real)
    with pytest.raises(SyntaxError):
        pyparse.parse("def f(:\n")


def test_another_system_error_and_a_persistent_mismatch_are_raised(monkeypatch):
    monkeypatch.setattr(pyparse, "_RAW_PARSE", lambda *a, **k: (_ for _ in ()).throw(SystemError("something else")))
    with pytest.raises(SystemError, match="something else"):
        pyparse.parse("x = 1\n")
    monkeypatch.setattr(pyparse, "_RAW_PARSE",
                        lambda *a, **k: (_ for _ in ()).throw(SystemError("recursion depth mismatch")))
    with pytest.raises(SystemError, match="mismatch"):
        pyparse.parse("x = 1\n")


def test_eight_threads_parse_deeply_nested_sources_at_once():
    """What tests/hostile/test_concurrency.py does through grade_submission (eight gradings in threads;
    there the unguarded parses made one raise SystemError): every parse returns the right tree."""
    source = "y = " + "(" * 60 + "1" + ")" * 60 + "\n" + "def f(x):\n    return [[x for _ in range(2)] for _ in range(3)]\n" * 50
    errors: list[BaseException] = []

    def work():
        try:
            for _ in range(40):
                assert len(pyparse.parse(source).body) == 51
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_importing_grader_guards_the_process_wide_ast_parse():
    """Libraries call the module attribute ``ast.parse`` at call time (``ast.literal_eval``,
    ``traceback``, ``inspect``): after ``import grader`` it is the guarded one, and installing twice
    keeps the interpreter's own parse underneath (no wrapper around a wrapper)."""
    import grader  # noqa: F401 - the import installs the guard

    assert ast.parse is pyparse.guarded_parse
    pyparse.install()
    assert pyparse._RAW_PARSE is not pyparse.guarded_parse and ast.parse is pyparse.guarded_parse
    assert ast.literal_eval("{'descr': '<f4', 'shape': (2, 3)}") == {"descr": "<f4", "shape": (2, 3)}
    assert ast.dump(ast.parse("x = 1", mode="exec", type_comments=True)) == ast.dump(pyparse._RAW_PARSE("x = 1"))


def test_library_parses_from_threads_never_overlap(monkeypatch):
    """The race of python/cpython#106905 needs two AST conversions at once. The interpreter's parse is
    replaced by one that stays inside for a moment and records any overlap; eight threads then parse
    the way grading does: the grader's own parse, ``numpy.load`` (its header is read with
    ``ast.literal_eval``), traceback formatting (3.11 parses each printed line for its carets) and
    ``inspect.signature`` of a builtin. Without the process-wide lock the sleeps overlap at once."""
    import io
    import inspect
    import time
    import traceback

    import numpy as np

    real = pyparse._RAW_PARSE
    inside = []
    overlaps = []
    seen = []
    guard = threading.Lock()

    def slow(source, *args, **kwargs):
        with guard:
            inside.append(1)
            if len(inside) > 1:
                overlaps.append(str(source)[:40])
        time.sleep(0.002)
        try:
            return real(source, *args, **kwargs)
        finally:
            with guard:
                inside.pop()
                seen.append(str(source)[:40])

    buf = io.BytesIO()
    np.save(buf, np.arange(6, dtype=np.float32).reshape(2, 3))
    npy = buf.getvalue()
    monkeypatch.setattr(pyparse, "_RAW_PARSE", slow)
    errors: list[BaseException] = []

    def fail():
        return {}["a"] + 1

    def work(kind):
        try:
            for _ in range(5):
                if kind == 0:
                    pyparse.parse("def f(x):\n    return x + 1\n")
                elif kind == 1:
                    assert np.load(io.BytesIO(npy), allow_pickle=False).shape == (2, 3)
                elif kind == 2:
                    try:
                        fail()
                    except KeyError as exc:
                        "".join(traceback.format_exception(exc))
                else:
                    inspect.signature(sorted)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i % 4,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert any("descr" in s for s in seen), "numpy.load did not parse through the guard"
    assert any("def f" in s for s in seen)
    assert overlaps == []
