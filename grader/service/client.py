"""The client side of interview mode: ``grade submit ID FILE --server URL --token T`` (httpx).

Uploads the file, polls the submission until it is graded (or the grader gave up), and returns the
candidate-view scorecard for the CLI to print exactly as local grading does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import httpx

#: statuses after which a submission will not change
FINAL = ("graded", "infrastructure_error")


class ClientError(Exception):
    """The server refused the request (``usage`` True: the caller's fault, e.g. a bad token, an
    exercise not in the cohort, a file over the cap) or could not be reached / gave up (False)."""

    def __init__(self, message: str, *, usage: bool):
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True)
class RemoteResult:
    """A finished remote submission: its id, final status and candidate-view scorecard document
    (None when the grader failed on it: ``status`` is then ``infrastructure_error``)."""

    id: int
    status: str
    scorecard: dict | None


def _detail(resp: httpx.Response) -> str:
    try:
        detail = resp.json().get("detail")
    except ValueError:
        detail = None
    if isinstance(detail, list):  # pydantic validation errors
        detail = "; ".join(str(d.get("msg", d)) for d in detail)
    return f"the server answered {resp.status_code}: {detail or resp.reason_phrase}"


def submit_remote(server: str, token: str, exercise: str, path: Path, *, timeout_s: float = 900.0,
                  poll_s: float = 0.5, progress: Callable[[str], None] | None = None,
                  transport: httpx.BaseTransport | None = None) -> RemoteResult:
    """Upload ``path`` as a solution of ``exercise`` and wait for its verdict.

    Args:
        server: base URL, e.g. ``http://127.0.0.1:8000``.
        token: the candidate's invite token (sent as ``Authorization: Bearer``, never in the URL).
        timeout_s: seconds to wait for the verdict.
        progress: called with a short line whenever the status changes.
    Raises:
        ClientError: refused (``usage``), unreachable, or no verdict within ``timeout_s``.
        OSError: ``path`` cannot be read.
    """
    say = progress or (lambda _m: None)
    source = Path(path).read_bytes()
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=server.rstrip("/"), headers=headers, timeout=30.0, transport=transport) as http:
            resp = http.post("/api/submissions", data={"exercise": exercise},
                             files={"file": (Path(path).name, source, "text/x-python")})
            if resp.status_code != 202:
                raise ClientError(_detail(resp), usage=400 <= resp.status_code < 500)
            sub_id = resp.json()["id"]
            say(f"submission {sub_id} queued")
            deadline, last = time.monotonic() + timeout_s, "queued"
            while True:
                resp = http.get(f"/api/submissions/{sub_id}")
                if resp.status_code != 200:
                    raise ClientError(_detail(resp), usage=400 <= resp.status_code < 500)
                doc = resp.json()
                if doc["status"] != last:
                    last = doc["status"]
                    say(f"submission {sub_id} {last}")
                if doc["status"] in FINAL:
                    return RemoteResult(sub_id, doc["status"], doc.get("scorecard"))
                if time.monotonic() > deadline:
                    raise ClientError(f"no verdict for submission {sub_id} after {timeout_s:g} s", usage=False)
                time.sleep(poll_s)
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot reach {server}: {exc}", usage=False) from exc
