"""grader.pyparse: the grader's ast.parse, safe when several gradings run at once in threads."""

from __future__ import annotations

import ast
import threading

import pytest

from grader import pyparse


def test_a_depth_mismatch_is_retried_and_a_syntax_error_is_not(monkeypatch):
    calls = []
    real = ast.parse

    def flaky(source, filename="<unknown>"):
        calls.append(source)
        if len(calls) < 3:
            raise SystemError("AST constructor recursion depth mismatch (before=27, after=17)")
        return real(source, filename)

    monkeypatch.setattr(pyparse.ast, "parse", flaky)
    tree = pyparse.parse("x = 1\n")
    assert isinstance(tree.body[0], ast.Assign) and len(calls) == 3
    monkeypatch.setattr(pyparse.ast, "parse", real)
    with pytest.raises(SyntaxError):
        pyparse.parse("def f(:\n")


def test_another_system_error_and_a_persistent_mismatch_are_raised(monkeypatch):
    monkeypatch.setattr(pyparse.ast, "parse", lambda *a: (_ for _ in ()).throw(SystemError("something else")))
    with pytest.raises(SystemError, match="something else"):
        pyparse.parse("x = 1\n")
    monkeypatch.setattr(pyparse.ast, "parse",
                        lambda *a: (_ for _ in ()).throw(SystemError("recursion depth mismatch")))
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
