"""Automated grader for self-attention interview exercises.

The package is split by job: ``exercise`` loads exercise folders, ``plan`` describes what to run,
``runner`` executes a plan (inside the sandbox and, for references, on the host), ``sandbox``
holds the backends, ``compare``/``tolerance`` judge numbers, ``api_rules`` scans sources,
``grading`` ties one submission together, ``scorecard`` is the result record, ``cli`` parses and
renders.
"""

__version__ = "0.1.0"

# Every ast.parse in this process (the grader's, numpy.load's header reader, traceback's caret
# anchors, ...) is serialised: CPython 3.11's is not thread-safe (grader.pyparse).
from grader import pyparse as _pyparse  # noqa: E402

_pyparse.install()
