"""Server logs: one format with timestamps (text or JSON lines), and every INTERNAL_ERROR
logged once with its cause and a request id that the answer carries in a header (never a trace).

The three server-side failures an operator meets: a store without a client config, a table
dropped while serving, pages overwritten while serving."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from nearrpc.sample import sample_chain
from nearrpc.store import open_store
from tests.store.sqlite_files import drop_tables
from tests.support.serve_process import STARTED, Served, serving

pytestmark = pytest.mark.live


def _records(served: Served) -> list[dict[str, Any]]:
    return [json.loads(line) for line in served.log_lines()]


def _internal_error_logged_once(served: Served, http: httpx.Client, method: str, params: Any, cause: str) -> None:
    answer = http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert answer.status_code == 500 and answer.json()["error"]["name"] == "INTERNAL_ERROR"
    request_id = answer.headers["x-request-id"]
    assert "Traceback" not in answer.text and request_id not in answer.text
    logged = [r for r in _records(served) if r.get("request_id") == request_id]
    assert len(logged) == 1, logged
    record = logged[0]
    assert record["level"] == "ERROR" and record["logger"] == "nearrpc.endpoint"
    assert record["rpc_method"] == method and cause in record["cause"]
    assert record["message"].startswith(f"INTERNAL_ERROR request_id={request_id} method={method}: ")
    assert "exc_info" not in record  # an expected store failure carries no traceback


def test_internal_errors_are_logged_once_with_cause_and_request_id(sample_store: Path, tmp_path: Path) -> None:
    store = tmp_path / "served.sqlite"
    shutil.copyfile(sample_store, store)
    with (
        serving("--store", store, "--log-format", "json", "--log-level", "warning", log=tmp_path / "log") as served,
        httpx.Client(base_url=served.url, timeout=10) as http,
    ):
        records = _records(served)  # every line is one JSON object with the common members
        assert records and all({"time", "level", "logger", "message"} <= set(r) for r in records)
        assert records[0]["logger"] == "nearrpc.serve" and STARTED.search(records[0]["message"])

        drop_tables(store, "account_states")
        _internal_error_logged_once(served, http, "EXPERIMENTAL_view_account",
                                    {"account_id": "alice.localnet", "finality": "final"}, "no such table")

        with store.open("r+b") as damaged:  # overwrite every page after the first
            size = damaged.seek(0, 2)
            damaged.seek(4096)
            damaged.write(b"\xa5" * (size - 4096))
        _internal_error_logged_once(served, http, "block", {"block_id": 5}, "malformed")


def test_a_missing_client_config_is_logged(tmp_path: Path) -> None:
    store = tmp_path / "genesis-only.sqlite"
    with open_store(store, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(sample_chain().genesis_config_json)
    with (
        serving("--store", store, "--log-format", "json", log=tmp_path / "log") as served,
        httpx.Client(base_url=served.url, timeout=10) as http,
    ):
        _internal_error_logged_once(served, http, "client_config", None, "the store holds no client_config")
