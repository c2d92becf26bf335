"""The process title without passwords: `ps` shows a process's command line, which may hold a
store URL with a password (`--store postgresql://user:secret@...`) or an upstream node's URL with
an API key; every `nearrpc` command shows them masked instead.

This runs first, before the command's modules are imported (`nearrpc.cli.entry`): anyone on the
machine can read a command line, so it imports nothing but `nearrpc.urls` and setproctitle."""

from __future__ import annotations

from nearrpc.urls import mask_password, public_url


def _masked(word: str) -> str:
    """A command-line word with any URL in it (`URL` or `--flag=URL`) masked: a store's password,
    an upstream node's credentials (which providers put in the path or query too)."""
    head, equals, value = word.partition("=") if "=" in word.split("://", 1)[0] else ("", "", word)
    if value.startswith(("http://", "https://")):
        return head + equals + public_url(value)
    return head + equals + mask_password(value) if "://" in value else word


def hide_passwords() -> None:
    from setproctitle import getproctitle, setproctitle

    title = getproctitle()
    masked = " ".join(_masked(word) for word in title.split(" "))
    if masked != title:
        setproctitle(masked)
