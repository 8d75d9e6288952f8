"""Closed vocabularies for check verdicts and submission statuses.

Modelled on DMOJ's ``dmoj/result.py`` (one closed set, a display order for the headline) and on
PrairieLearn's split between candidate faults and grader faults: ``INFRASTRUCTURE_ERROR`` is the
grader's own fault and is never charged to the candidate.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """Outcome of one check."""

    PASSED = "passed"
    FAILED = "failed"  # wrong answer (values, shape, dtype, property)
    ERROR = "error"  # the submission raised, or an entry point is missing
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    FORBIDDEN = "forbidden"  # an API rule was broken
    SKIPPED = "skipped"


class Status(StrEnum):
    """Outcome of one submission as a whole."""

    GRADED = "graded"
    COMPILE_ERROR = "compile_error"  # syntax error or failure at import
    TIMEOUT = "timeout"  # the whole run exceeded its wall-clock or CPU limit
    CRASHED = "crashed"  # the sandbox process died (signal, os._exit, killed)
    INFRASTRUCTURE_ERROR = "infrastructure_error"  # the grader's fault


#: Order in which check verdicts headline a summary: the most serious first.
VERDICT_DISPLAY_ORDER = (
    Verdict.FORBIDDEN,
    Verdict.TIMEOUT,
    Verdict.MEMORY_LIMIT,
    Verdict.ERROR,
    Verdict.FAILED,
    Verdict.SKIPPED,
    Verdict.PASSED,
)

CATEGORIES = ("correctness", "edge_case", "stability", "gradient", "api", "complexity")
VISIBILITIES = ("public", "hidden")

#: CLI exit codes.
EXIT_ALL_PASSED = 0
EXIT_FAILURES = 1
EXIT_USAGE = 2
EXIT_INFRASTRUCTURE = 3
