"""Fixtures' helpers for the interview-mode tests: a live `grade serve` and a throwaway PostgreSQL."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from glob import glob
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
INTERVIEWER_TOKEN = "interviewer-" + "k3y" * 8


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveServer:
    """A `grade serve` subprocess on 127.0.0.1 (its output goes to ``log``)."""

    db_url: str
    log: Path
    workers: int = 2
    rate_limit: int = 1000
    sandbox: str = "process"
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90.0) -> "LiveServer":
        env = {**os.environ, "GRADER_INTERVIEWER_TOKEN": INTERVIEWER_TOKEN, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", "grader.cli", "serve", "--db", self.db_url, "--port", str(self.port),
               "--workers", str(self.workers), "--sandbox", self.sandbox, "--rate-limit", str(self.rate_limit)]
        cmd += ["--insecure-sandbox"] if self.sandbox == "process" else []  # also where a box lacks a protection
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=self.log.parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"grade serve exited {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"grade serve did not answer in {timeout} s: {self.log.read_text()[-3000:]}")

    def children(self) -> list[int]:
        """Pids of the server's child processes (its grading processes), from /proc."""
        kids = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.proc.pid:
                kids.append(int(stat.parent.name))
        return kids

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def pg_bin() -> Path | None:
    """The folder of Debian's PostgreSQL binaries (the newest version), or None."""
    found = sorted(glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


class Postgres:
    """A PostgreSQL server in a temporary folder on a unix socket (initdb + pg_ctl), stopped by ``stop``.

    As root (initdb refuses root), it runs as the ``postgres`` user through ``runuser``.
    """

    def __init__(self):
        self.bin = pg_bin()
        if self.bin is None:
            if os.environ.get("GRADER_REQUIRE_POSTGRES") == "1":
                pytest.fail("GRADER_REQUIRE_POSTGRES=1 but no /usr/lib/postgresql/*/bin/initdb")
            pytest.skip("PostgreSQL is not installed (/usr/lib/postgresql/*/bin)")
        self.dir = Path(tempfile.mkdtemp(prefix="grader-pg-"))  # not under pytest's 0700 tmp: postgres must enter
        os.chmod(self.dir, 0o755)
        self.data, self.sock = self.dir / "data", self.dir
        self.port = free_port()
        self.prefix = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"])
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(self.dir / "log"), "-o",
                   f"-k {self.sock} -p {self.port} -c listen_addresses='' -c max_connections=200 -c fsync=off",
                   "start"])

    def _run(self, cmd):
        subprocess.run(self.prefix + cmd, check=True, capture_output=True, timeout=120)

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@/postgres?host={self.sock}&port={self.port}"

    def stop(self) -> None:
        subprocess.run(self.prefix + [str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


def get(url: str, **kw) -> httpx.Response:
    """httpx.get with a timeout that suits 2 busy cores (60 s)."""
    return httpx.get(url, timeout=kw.pop("timeout", 60), **kw)


def post(url: str, **kw) -> httpx.Response:
    """httpx.post with a timeout that suits 2 busy cores (60 s)."""
    return httpx.post(url, timeout=kw.pop("timeout", 60), **kw)


def auth(token: str | None) -> dict:
    return {"Authorization": f"Bearer {token}"} if token else {}


def wait_final(url: str, token: str, sub_id: int, timeout: float = 180.0) -> dict:
    """Poll a submission until graded or infrastructure_error."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        doc = get(f"{url}/api/submissions/{sub_id}", headers=auth(token)).json()
        if doc["status"] in ("graded", "infrastructure_error"):
            return doc
        time.sleep(0.3)
    raise AssertionError(f"submission {sub_id} not graded within {timeout} s")
