"""The ``grade`` console script: ``grade submit``'s first sandbox starts before the CLI is imported.

Importing the CLI (click, rich, the exercises, judges and probes) takes about 0.2 s; a torch
exercise's sandbox then spends over a second importing torch. ``run`` hands the command line to
``grader.sandbox.early`` first, which starts that sandbox's runner in the background when the
command is a local ``grade submit``, then runs the CLI as ``grader.cli.run`` does.
"""

from __future__ import annotations

import sys


def run() -> None:
    """The ``grade`` console script."""
    from grader.sandbox.early import start_for_argv  # noqa: PLC0415

    start_for_argv(sys.argv[1:])
    from grader.cli import run as cli_run  # noqa: PLC0415

    cli_run()
