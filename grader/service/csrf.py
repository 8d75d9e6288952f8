"""No state change without the service's own page: an ``Origin``/``Sec-Fetch-Site`` guard and
form tokens bound to the session (the synchronizer-token pattern).

Two defences, both needed, because cookies do not separate ports: a page on another port of the
same host is *same-site*, so ``SameSite=Strict`` cookies go with its form posts, and it can also
write cookies for this host (a ``Set-Cookie`` from its own port reaches ours).

* ``CrossSiteGuard`` (ASGI middleware) refuses, with a 403 page (JSON under ``/api/``), every
  unsafe request (POST, PUT, PATCH, DELETE) without an ``Authorization: Bearer`` header whose
  ``Sec-Fetch-Site`` is anything but ``same-origin`` or ``none``, or whose ``Origin`` is not the
  service's own (host and port as the request's ``Host`` names them), or is ``null`` without a
  ``Sec-Fetch-Site: same-origin`` (browsers send ``Origin: null`` from a ``no-referrer`` page even
  to its own origin, so the pages use ``Referrer-Policy: same-origin``). Browsers send both on every form post (Fetch Metadata; Django's
  ``CsrfViewMiddleware`` checks ``Origin`` the same way). Only this stops a forged *login*, since
  before login there is no session to bind a token to.
* ``form_token(key, session, purpose)`` is the hidden field of every form: an HMAC-SHA256 of the
  session cookie's value under a key only the server holds, so a token is useless with any other
  session; the login form's token is bound to a pre-session cookie set with the login page.

Why not ``starlette-csrf`` or ``asgi-csrf``: both are double-submit cookies (a random cookie that a
form field or header must repeat), which a page on another port defeats by writing that cookie
itself with a value it read from the service; ``starlette-csrf`` also reads the token from a header
only, which needs JavaScript. The pages' forms must work without it: their one script (the service's
own static file, ``script-src 'self'``, no inline script) only indents in the paste box and polls a
pending result with GET requests, so every form still posts its token in a hidden field, and a page
on another port gains nothing from the script (it can neither read the token nor post with it).

A request with an ``Authorization: Bearer`` header is not checked: its credential is not ambient (no
browser adds it to a cross-site form), and ``grader.service.deps`` never reads the cookie when the
header is there. A request with the cookie and no such header is a form request, checked alike on
``/api/`` routes (``require``).
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from fastapi import HTTPException

#: The hidden form field (and, for JSON bodies, the header ``X-CSRF-Token``) carrying the token.
FIELD = "csrf_token"
HEADER = "x-csrf-token"
#: The pre-session cookie the login form's token is bound to (random, HttpOnly, SameSite=Strict).
PRESESSION_COOKIE = "grader_presession"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
#: ``Sec-Fetch-Site`` values of a request made by the service's own page or typed by the user.
_OWN = frozenset({"same-origin", "none"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def derive_key(interviewer_token: str) -> bytes:
    """The server's token key (32 bytes), derived from the interviewer token so that forms stay
    valid across a restart of the same service; candidates never learn either."""
    return hmac.new(interviewer_token.encode("utf-8"), b"attention-grader form tokens v1", hashlib.sha256).digest()


def form_token(key: bytes, session: str, purpose: str = "session") -> str:
    """The form token for ``session`` (the cookie's value): 64 hex characters.

    Args:
        key: ``derive_key``'s result.
        session: the session cookie's value (``purpose="session"``) or the pre-session cookie's
            (``purpose="login"``).
        purpose: keeps a login token from serving as a session token and back.
    """
    msg = purpose.encode() + b"\0" + hashlib.sha256(session.encode("utf-8")).digest()
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def valid(key: bytes, session: str | None, presented: str | None, purpose: str = "session") -> bool:
    """Whether ``presented`` is ``session``'s token (constant-time compare; False when either is absent)."""
    if not session or not presented:
        return False
    return hmac.compare_digest(form_token(key, session, purpose).encode(), presented.strip().encode("utf-8", "replace"))


def require(key: bytes, session: str | None, presented: str | None) -> None:
    """Refuse a request that authenticated with the session cookie (``session`` set) without that
    session's form token; a caller with a Bearer token (``session`` None) passes.

    Raises:
        HTTPException(403): the token is missing or belongs to another session.
    """
    if session is not None and not valid(key, session, presented):
        raise HTTPException(403, "this form is not from this service's own page (its form token is missing or "
                                 "out of date): reload the page and send it again")


def require_for(request, who, token: str | None = None) -> None:
    """``require`` for a route's caller ``who`` (a ``deps.Principal``): the form token is ``token``
    (a form field) when given, else the ``X-CSRF-Token`` header (a JSON body); the key is the app's
    (``app.state.csrf_key``).

    Raises:
        HTTPException(403): a cookie session sent no token of its own.
    """
    require(request.app.state.csrf_key, who.session, token if token is not None else request.headers.get(HEADER))


def _host_port(host: str) -> tuple[str, int | None] | None:
    """``(hostname, port or None)`` of a ``Host`` header, or None when it does not parse."""
    parts = urlsplit(f"//{host.strip()}")
    try:
        port = parts.port
    except ValueError:
        return None
    return ((parts.hostname or "").lower(), port) if parts.hostname else None


def _same_origin(origin: str, host: str) -> bool:
    """Whether ``origin`` names the host and port of the ``Host`` header. The scheme need not match
    (behind a TLS proxy a request reaches us as http); without a port in ``Host``, the origin's
    port must be its scheme's default."""
    theirs, mine = urlsplit(origin), _host_port(host)
    if mine is None or theirs.scheme.lower() not in _DEFAULT_PORTS or not theirs.hostname:
        return False  # Origin: null, a file: or extension origin, or a Host we cannot read
    try:
        port = theirs.port or _DEFAULT_PORTS[theirs.scheme.lower()]
    except ValueError:
        return False
    want = mine[1] if mine[1] is not None else _DEFAULT_PORTS[theirs.scheme.lower()]
    return theirs.hostname.lower() == mine[0] and port == want


def foreign(scope) -> str | None:
    """Why an unsafe request without ``Authorization: Bearer`` comes from another site, origin or port
    (a sentence for the 403 page), or None when it may go on."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    scheme, _, credential = headers.get("authorization", "").strip().partition(" ")
    if scope.get("method", "GET") in SAFE_METHODS or (scheme.lower() == "bearer" and credential.strip()):
        return None
    fetch_site = headers.get("sec-fetch-site", "").strip().lower()
    if fetch_site and fetch_site not in _OWN:
        return f"the browser says this request came from another site or port (Sec-Fetch-Site: {fetch_site})"
    origin = headers.get("origin")
    if origin is None:
        return None
    origin = origin.strip()
    if origin == "null":  # an opaque origin: a sandboxed frame, file:, data:, or a no-referrer page
        if fetch_site == "same-origin":
            return None
        return "this form was sent from a page without an origin (Origin: null), not from this service's page"
    if not _same_origin(origin, headers.get("host", "")):
        return f"this form was sent from another origin ({origin[:100]}), not from this service's page"
    return None


class CrossSiteGuard:
    """ASGI middleware: 403 for an unsafe request that another site, origin or port sent (``foreign``).

    ``render(status, message, api)`` builds the response (the service's error page, or JSON for the API).
    """

    def __init__(self, app, render):
        self.app, self.render = app, render

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            why = foreign(scope)
            if why is not None:
                api = scope.get("path", "").startswith("/api/")
                return await self.render(403, why, api)(scope, receive, send)
        await self.app(scope, receive, send)
