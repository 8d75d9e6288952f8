"""Authentication of the service as FastAPI dependencies.

A token comes from ``Authorization: Bearer TOKEN`` (API clients) or from the ``grader_session``
cookie that the login form sets (pages; HttpOnly, SameSite=Strict). Tokens never travel in URLs.

* The interviewer token (``GRADER_INTERVIEWER_TOKEN``) is compared with ``hmac.compare_digest``
  (constant time in the length of the inputs).
* A candidate token is looked up by its SHA-256 digest (the database keeps digests only), and the
  stored digest is compared with ``hmac.compare_digest`` as well; the lookup learns nothing a
  timing attacker could use, since the digest of a guess reveals nothing about the token.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, replace
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from sqlalchemy import select
from sqlalchemy.orm import Session

from grader.service import sessions
from grader.service.db import Candidate, token_digest

COOKIE = "grader_session"


@dataclass(frozen=True)
class Principal:
    """Who is calling: the interviewer, or one candidate (``candidate`` is then set).

    ``session`` is the cookie's value when the token came from the login cookie (a browser's
    ambient credential: a state-changing request must then carry that session's form token,
    ``grader.service.csrf``), None when it came in an ``Authorization`` header."""

    role: str
    candidate: Candidate | None = None
    session: str | None = None
    #: a candidate's ``grader.service.sessions.Timer`` (time left shown on their pages), else None
    timer: object | None = None

    @property
    def is_interviewer(self) -> bool:
        """Whether this is the interviewer."""
        return self.role == "interviewer"


def bearer_token(request: Request) -> str | None:
    """The token of a request: the Authorization header (``Bearer``, any case) first, then the cookie."""
    header = request.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer":
            return None
        return value.strip() or None
    return request.cookies.get(COOKIE) or None


def session_dep(request: Request):
    """A database session for one request (closed afterwards)."""
    with request.app.state.sessions() as session:
        yield session


DB = Annotated[Session, Depends(session_dep)]


def identify(token: str | None, interviewer_token: str, session: Session) -> Principal | None:
    """The principal ``token`` stands for, or None (unknown or absent)."""
    if not token:
        return None
    if hmac.compare_digest(token.encode("utf-8"), interviewer_token.encode("utf-8")):
        session.rollback()
        return Principal("interviewer")
    digest = token_digest(token)
    candidate = session.scalars(select(Candidate).where(Candidate.token_hash == digest)).first()
    if candidate is not None:
        session.expunge(candidate)
    # End the lookup's transaction now: on SQLite every transaction holds the write lock (BEGIN
    # IMMEDIATE), and a request may go on to stream an upload for a while.
    session.rollback()
    if candidate is None or not hmac.compare_digest(candidate.token_hash, digest):
        return None
    return Principal("candidate", candidate)


def optional_principal(request: Request, session: DB) -> Principal | None:
    """The caller, or None when no valid token came."""
    token = bearer_token(request)
    who = identify(token, request.app.state.settings.interviewer_token, session)
    if who is not None and not request.headers.get("authorization"):  # the token came from the cookie
        who = replace(who, session=token)
    return who


def untimed_principal(who: Annotated[Principal | None, Depends(optional_principal)]) -> Principal:
    """The caller, the clock of a timed session not checked (the feedback page only). Raises 401
    (with ``WWW-Authenticate: Bearer``) without a valid token."""
    if who is None:
        raise HTTPException(401, "a valid token is required", headers={"WWW-Authenticate": "Bearer"})
    return who


def principal(request: Request, session: DB, who: Annotated[Principal, Depends(untimed_principal)]) -> Principal:
    """The caller. A candidate's first call starts a timed session (``grader.service.sessions.start``,
    on the app's injected clock ``app.state.clock``) and carries its ``timer``. Raises 401 without a
    valid token, 403 (saying when it ended) after the candidate's timed session."""
    if who.is_interviewer:
        return who
    timer = sessions.start(session, who.candidate.id, request.app.state.clock())
    if timer.expired:
        raise HTTPException(403, sessions.expired_message(timer))
    return replace(who, timer=timer)


def interviewer(who: Annotated[Principal, Depends(principal)]) -> Principal:
    """The interviewer. Raises 401 without a token, 403 for a candidate's."""
    if not who.is_interviewer:
        raise HTTPException(403, "this needs the interviewer token")
    return who


def candidate(who: Annotated[Principal, Depends(principal)]) -> Principal:
    """A candidate. Raises 401 without a token, 403 for the interviewer's (interviewers do not submit)."""
    if who.is_interviewer:
        raise HTTPException(403, "only candidates submit")
    return who


def candidate_untimed(who: Annotated[Principal, Depends(untimed_principal)]) -> Principal:
    """A candidate, also after their timed session (the released feedback page). Raises 401/403 as ``candidate``."""
    if who.is_interviewer:
        raise HTTPException(403, "this page is the candidate's")
    return who


Anyone = Annotated[Principal, Depends(principal)]
CandidateAnyTime = Annotated[Principal, Depends(candidate_untimed)]
#: anyone, a candidate also after their timed session: reading an attempt's result (``grade submit
#: --server`` polls an upload made in time after the time is up)
AnyoneAnyTime = Annotated[Principal, Depends(untimed_principal)]
MaybeAnyone = Annotated[Principal | None, Depends(optional_principal)]
Interviewer = Annotated[Principal, Depends(interviewer)]
CandidateP = Annotated[Principal, Depends(candidate)]
