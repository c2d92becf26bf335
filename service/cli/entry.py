"""The `nearrpc` command's entry point: the process title is masked (`proctitle`) before the
command's modules load, which takes a second or two, during which `ps` would show an upstream's
API key or a store's password to anyone on the machine."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the process's own command line: what `ps` shows
        from nearrpc.cli.proctitle import hide_passwords

        hide_passwords()
    from nearrpc.cli.main import main as run

    return run(argv)
