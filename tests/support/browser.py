"""A real headless browser for tests: Debian's chromium, driven by Playwright.

Playwright's own browser downloads are never used (`playwright install` is never run): the
system chromium is launched through `executable_path`. When it is missing, the test set-up
installs it with apt-get (as CI's .ci/run does), so `./check` stays the only command.
Every request the page makes is recorded; any not to 127.0.0.1 is aborted and recorded too.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import ConsoleMessage, Page, Request, Response, Route, sync_playwright

from tests.support.cli import REPO
from tests.support.debian import ensure_package

CHROMIUM = Path(os.environ.get("NEARRPC_CHROMIUM", "/usr/bin/chromium"))
_FLAGS = [
    "--no-sandbox",  # tests run as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_LOCAL_HOSTS = frozenset({"127.0.0.1"})


def artifacts_dir() -> Path:
    """Where tests leave files for people to look at (screenshots): $NEARRPC_TEST_ARTIFACTS,
    else reports/test-artifacts in the checkout."""
    folder = Path(os.environ.get("NEARRPC_TEST_ARTIFACTS", REPO / "reports" / "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def ensure_chromium() -> Path:
    """The system chromium, installed with apt-get when missing (root only, as in CI)."""
    return ensure_package("chromium", lambda: CHROMIUM if CHROMIUM.is_file() else None)


@dataclass
class Traffic:
    """What the page asked for and what went wrong."""

    requests: list[str] = field(default_factory=list)
    failed: list[tuple[str, str | None]] = field(default_factory=list)
    bad_status: list[tuple[int, str]] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def off_host(self) -> set[str]:
        hosts = {urlsplit(url).hostname for url in self.requests if not url.startswith(("data:", "blob:"))}
        return {str(host) for host in hosts - _LOCAL_HOSTS}


@contextmanager
def browser_page(width: int = 1280, height: int = 1000) -> Iterator[tuple[Page, Traffic]]:
    """A fresh headless chromium profile with one page, and the record of its traffic."""
    executable = ensure_chromium()
    traffic = Traffic()

    def guard(route: Route) -> None:
        url = route.request.url
        if url.startswith(("data:", "blob:")) or urlsplit(url).hostname in _LOCAL_HOSTS:
            route.continue_()
        else:
            traffic.blocked.append(url)
            route.abort()

    def on_response(response: Response) -> None:
        if response.status >= 400:
            traffic.bad_status.append((response.status, response.url))

    def on_failed(request: Request) -> None:
        traffic.failed.append((request.url, request.failure))

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            traffic.console_errors.append(message.text)

    with sync_playwright() as playwright, tempfile.TemporaryDirectory(prefix="nearrpc-chromium-") as profile:
        # a persistent context is how Playwright takes a user data folder (a fresh one here)
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(executable), headless=True, args=_FLAGS,
            viewport={"width": width, "height": height},
        )
        try:
            context.route("**/*", guard)
            page = context.new_page()
            page.on("request", lambda request: traffic.requests.append(request.url))
            page.on("requestfailed", on_failed)
            page.on("response", on_response)
            page.on("console", on_console)
            page.on("pageerror", lambda error: traffic.console_errors.append(str(error)))
            yield page, traffic
        finally:
            context.close()
