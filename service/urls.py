"""URLs as shown to people: logs, error answers, reports, process titles.

Providers put API keys in a URL's user and password, its path or its query, so a URL shown
anywhere keeps its scheme, host and port only; `…` says that something was left out."""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

MASK: Final = "***"
# user:password@ in the authority, and password=... among the query parameters (libpq's URLs)
_USERINFO_PASSWORD: Final = re.compile(r"^(?P<head>[a-z]+://[^:@/?#]*):(?P<password>[^@/?#]*)@", re.IGNORECASE)
_QUERY_PASSWORD: Final = re.compile(r"(?P<head>[?&]password=)(?P<password>[^&#]*)", re.IGNORECASE)
# a URL inside free text (an exception's message): up to the first space or quote, without the
# punctuation that ends a sentence or a "URL: problem" prefix
_URL_IN_TEXT: Final = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]*[^\s'\"<>:,.;)\]]")


def public_url(url: str) -> str:
    """scheme://host:port and its path when that is "/" (`/…` when a user, path or query was
    left out)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = urlsplit(""), None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    hidden = "/…" if (parts.path not in ("", "/") or parts.query or parts.fragment or parts.username
                      or parts.password) else parts.path  # fmt: skip
    scheme = parts.scheme or "url"
    return f"{scheme}://{host}{'' if port is None else f':{port}'}{hidden}"


def scrub_urls(text: str) -> str:
    """`text` with every URL in it shown as `public_url` shows it."""
    return _URL_IN_TEXT.sub(lambda match: public_url(match.group(0)), text)


def mask_password(url: str) -> str:
    """The URL with any password replaced by `***` (an empty password stays empty): how a store's
    location is shown, which names its database in its path."""
    masked = _USERINFO_PASSWORD.sub(lambda m: f"{m['head']}:{MASK if m['password'] else ''}@", url)
    return _QUERY_PASSWORD.sub(lambda m: f"{m['head']}{MASK}", masked)
