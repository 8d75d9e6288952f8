"""An exercise's statement (``spec.md``) as HTML for the service's exercise page.

CommonMark with tables (``markdown-it-py``; raw HTML in the Markdown is escaped, never passed
through, so a statement cannot carry a script), fenced code highlighted by Pygments with inline
styles (the pages' CSP allows inline styles and no scripts). Formulas stay as their text.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_FORMATTER = HtmlFormatter(noclasses=True, nowrap=True)


def _highlight(code: str, lang: str, _attrs: str) -> str:
    """Pygments HTML of a fenced block in ``lang`` ("" lets markdown-it escape it as plain text)."""
    try:
        lexer = get_lexer_by_name(lang or "text")
    except ClassNotFound:
        return ""
    return highlight(code, lexer, _FORMATTER)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "highlight": _highlight}).enable("table")


def render_statement(text: str) -> Markup:
    """The HTML of Markdown ``text`` (safe to insert into an autoescaped template)."""
    return Markup(_markdown().render(text))  # noqa: S704 - html disabled: every tag in text is escaped
