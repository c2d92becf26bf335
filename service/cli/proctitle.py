"""The process title without passwords: `ps` shows a process's command line, which may hold a
store URL with a password (`--store postgresql://user:secret@...`); every `nearrpc` command
shows it masked instead."""

from __future__ import annotations

from nearrpc.store import describe_location


def _masked(word: str) -> str:
    """A command-line word with any URL in it (`URL` or `--flag=URL`) masked."""
    head, equals, value = word.partition("=") if "=" in word.split("://", 1)[0] else ("", "", word)
    return head + equals + describe_location(value) if "://" in value else word


def hide_passwords() -> None:
    from setproctitle import getproctitle, setproctitle

    title = getproctitle()
    masked = " ".join(_masked(word) for word in title.split(" "))
    if masked != title:
        setproctitle(masked)
