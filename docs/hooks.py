"""MkDocs hook: show the CLI reference's placeholders (``DIR/<candidate>/<exercise>.py``) as text.

``mkdocs-click`` writes each command's help text into the page as Markdown, and Markdown passes
``<candidate>`` through as an HTML tag, which the browser then hides. On the CLI reference page,
every tag that Markdown itself does not produce is escaped back into text.
"""

from __future__ import annotations

import re

#: Tags the Markdown of this site produces (Python-Markdown, its extensions, mkdocs-click's tables).
MARKDOWN_TAGS = frozenset(
    "a abbr blockquote br code dd del details div dl dt em h1 h2 h3 h4 h5 h6 hr img input ins kbd "
    "label li mark ol p pre span strong sub summary sup table tbody td th thead tr ul".split()
)
TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)([^<>]*)>")


def escape_placeholders(html: str) -> str:
    """``html`` with every ``<name ...>`` whose name is not in MARKDOWN_TAGS written as text."""

    def keep_or_escape(match: re.Match) -> str:
        if match.group(2).lower() in MARKDOWN_TAGS:
            return match.group(0)
        return "&lt;" + match.group(0)[1:-1] + "&gt;"

    return TAG.sub(keep_or_escape, html)


def on_page_content(html, page, config, files):  # noqa: ARG001 - MkDocs' hook signature
    if page.file.src_uri == "cli.md":
        return escape_placeholders(html)
    return html
