"""The process sandbox drops privileges for real (issue #12, item 10): the submission's uid is not 0
on the host, it cannot write outside its scratch folder, and it reaches no network."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path

import pytest

from grader.sandbox.process import BOX_COUNT, BOX_UID_BASE, ProcessSandbox, probe_isolation

SNOOP = """
import json, os, socket
report = {"uid": os.getuid(), "euid": os.geteuid(), "writes": {}, "connect": None}
for target in __TARGETS__:
    try:
        with open(target, "w") as fh:
            fh.write("pwned")
        report["writes"][target] = "written"
    except OSError as exc:
        report["writes"][target] = type(exc).__name__
try:
    open("scratch-file", "w").write("mine")
    report["scratch"] = "written"
except OSError as exc:
    report["scratch"] = type(exc).__name__
try:
    socket.create_connection(("127.0.0.1", __PORT__), timeout=2).close()
    report["connect"] = "connected"
except OSError as exc:
    report["connect"] = type(exc).__name__
print("REPORT " + json.dumps(report))

def softmax(x, axis=-1):
    raise NotImplementedError
"""


@pytest.fixture
def world_writable_dir():
    """A folder on the host that any user may write (as /tmp itself is)."""
    folder = tempfile.mkdtemp(prefix="grader-escape-", dir="/tmp")
    os.chmod(folder, 0o777)
    yield Path(folder)
    for child in Path(folder).iterdir():
        child.unlink()
    os.rmdir(folder)


def test_the_submission_is_unprivileged_writes_only_its_scratch_and_has_no_network(grade_source, request,
                                                                                  world_writable_dir):
    isolation = probe_isolation(ProcessSandbox().python)
    if os.geteuid() == 0:
        assert isolation["user"] == "box", isolation  # a root grader must drop privileges here
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    repo_file = request.config.rootpath / "grader-escape-probe.txt"
    targets = [str(world_writable_dir / "escape.txt"), str(repo_file), "/tmp/grader-escape-root.txt"]
    source = SNOOP.replace("__TARGETS__", repr(targets)).replace("__PORT__", str(server.getsockname()[1]))
    try:
        card = grade_source("softmax", source)
    finally:
        server.close()
    line = next(ln for ln in card.output["text"].splitlines() if ln.startswith("REPORT "))
    report = json.loads(line[len("REPORT "):])
    assert report["uid"] != 0 and report["euid"] != 0
    if os.geteuid() == 0:
        assert BOX_UID_BASE <= report["uid"] < BOX_UID_BASE + BOX_COUNT
    assert report["scratch"] == "written"
    assert not (world_writable_dir / "escape.txt").exists() and not repo_file.exists()
    assert not Path("/tmp/grader-escape-root.txt").exists()  # its /tmp is a private tmpfs
    assert report["writes"][str(repo_file)] != "written"
    if isolation["network"]:
        assert report["connect"] != "connected"
    assert card.sandbox["isolation"]["user"].startswith("own uid" if os.geteuid() == 0 else "invoking user")
