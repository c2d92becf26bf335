"""A mock server reads the spec and answers with its examples: Stoplight Prism (`prism mock`,
pinned by tests/spec/mock/package-lock.json) on spec/openapi.json answers each method's path with
that method's first example, a real answer of the sample chain, where it made values up before.
On `POST /`, where all five methods share one path, a client picks an answer by its name."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO
from tests.support.npm import pinned_tools

SPEC = REPO / "spec" / "openapi.json"
MOCK = Path(__file__).resolve().parent / "mock"
EXAMPLES: dict[str, Any] = json.loads((REPO / "spec" / "examples.json").read_text(encoding="utf-8"))
STARTUP_SECONDS = 90.0
LISTENING = re.compile(r"Prism is listening on (http://127\.0\.0\.1:\d+)")


def _read_url(process: subprocess.Popen[bytes], log: Path) -> str:
    """The URL off Prism's start-up line in its log (it picks the port: `--port 0`)."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        if found := LISTENING.search(log.read_text(encoding="utf-8", errors="replace")):
            return found.group(1)
        time.sleep(0.1)
    raise AssertionError(f"prism mock did not start within {STARTUP_SECONDS} s:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def prism(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tools = pinned_tools(MOCK, "spec-mock", "prism")
    command = [str(tools / "prism"), "mock", str(SPEC), "--host", "127.0.0.1", "--port", "0"]
    log = tmp_path_factory.mktemp("prism") / "prism.log"
    with log.open("wb") as out:  # a file, not a pipe: Prism logs every request, and a full pipe would stop it
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            yield _read_url(process, log)
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=15)


def as_javascript_reads(value: Any) -> Any:
    """`value` with each integer beyond 2^53 as the nearest double: Prism is JavaScript, whose
    numbers are doubles, so it answers a u64 such as a block's nanosecond timestamp rounded."""
    if isinstance(value, dict):
        return {key: as_javascript_reads(member) for key, member in value.items()}
    if isinstance(value, list):
        return [as_javascript_reads(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        return float(value)
    return value


def _same(answer: httpx.Response, example: dict[str, Any]) -> bool:
    return bool(as_javascript_reads(answer.json()) == as_javascript_reads(example["response"]))


def _first(method: str) -> dict[str, Any]:
    first: dict[str, Any] = EXAMPLES["methods"][method][0]
    return first


@pytest.mark.parametrize("method", list(EXAMPLES["methods"]))
def test_each_method_path_answers_its_first_example(prism: str, method: str) -> None:
    example = _first(method)
    answer = httpx.post(f"{prism}/{method}", json=example["request"], timeout=60)
    assert answer.status_code == 200, answer.text
    assert _same(answer, example)


@pytest.mark.parametrize("method", list(EXAMPLES["methods"]))
def test_post_root_answers_the_example_named_after_the_method(prism: str, method: str) -> None:
    example = _first(method)
    answer = httpx.post(f"{prism}/", json=example["request"], headers={"Prefer": f"example={method}"}, timeout=60)
    assert answer.status_code == 200, answer.text
    assert _same(answer, example)


def test_an_error_example_is_answered_with_its_status(prism: str) -> None:
    (case,) = (case for case in EXAMPLES["methods"]["block"] if case["status"] == 422)
    answer = httpx.post(
        f"{prism}/block", json=case["request"], headers={"Prefer": f"code=422, example={case['name']}"}, timeout=60
    )
    assert answer.status_code == 422, answer.text
    assert _same(answer, case)
