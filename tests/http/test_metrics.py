"""GET /metrics after a bounded load: every answer counted once by method, error cause and HTTP
status, latencies by method, the store gauges and the build info; with `--workers 2` the counts
of both workers add up; `--no-metrics` turns it off."""

from __future__ import annotations

import http.client
import json
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from nearrpc.generated.methods import METHODS
from nearrpc.sample import sample_chain
from nearrpc.store import open_store
from nearrpc.version import INTERFACE_VERSION, SERVICE_VERSION
from tests.support.sample_facts import sample_facts
from tests.support.serve_process import Served, serving

pytestmark = pytest.mark.live

JSON = {"content-type": "application/json"}
Key = tuple[str, str, str]  # method, cause, status


def _load() -> list[tuple[bytes, dict[str, str], Key]]:
    """200 requests of eight kinds, each with the counter labels it must land under."""
    facts = sample_facts()
    skipped = facts.skipped_heights[0]

    def rpc(method: str, params: Any) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()

    kinds = [
        (120, rpc("block", {"finality": "final"}), JSON, ("block", "none", "200")),
        (20, rpc("block", {"block_id": 10**9}), JSON, ("block", "UNKNOWN_BLOCK", "200")),
        (10, rpc("block", {"block_id": skipped}), JSON, ("block", "UNKNOWN_BLOCK", "422")),
        (20, rpc("EXPERIMENTAL_view_account", {"account_id": "alice.localnet", "finality": "final"}), JSON,
         ("EXPERIMENTAL_view_account", "none", "200")),
        (10, rpc("EXPERIMENTAL_view_account", {"account_id": "nobody.localnet", "finality": "final"}), JSON,
         ("EXPERIMENTAL_view_account", "UNKNOWN_ACCOUNT", "200")),
        (10, rpc("no_such_method", None), JSON, ("unknown", "METHOD_NOT_FOUND", "400")),
        (5, b"{not json", JSON, ("none", "none", "400")),
        (5, rpc("block", {"finality": "final"}), {"content-type": "text/plain"}, ("none", "none", "415")),
    ]
    load = [(body, headers, key) for count, body, headers, key in kinds for _ in range(count)]
    assert len(load) == 200
    return load


def _send(url: str, load: list[tuple[bytes, dict[str, str], Key]], connections: int) -> Counter[Key]:
    """Each request on a connection of its own (so several workers share them), `connections` at a time."""
    address = urlsplit(url)

    def one(item: tuple[bytes, dict[str, str], Key]) -> Key:
        body, headers, key = item
        # one connection per request and per thread: a shared httpx.Client without keep-alive
        # raced on closing its pooled sockets across threads (EBADF at the client, once in CI)
        connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=30)
        try:
            connection.request("POST", "/", body=body, headers=headers)
            answer = connection.getresponse()
            text = answer.read()
        finally:
            connection.close()
        assert str(answer.status) == key[2], (key, answer.status, text[:200])
        return key

    with ThreadPoolExecutor(connections) as pool:
        return Counter(pool.map(one, load))


def _samples(url: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    answer = httpx.get(f"{url}/metrics", timeout=10)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def _requests(samples: dict[str, list[tuple[dict[str, str], float]]]) -> Counter[Key]:
    return Counter({
        (labels["method"], labels["cause"], labels["status"]): int(value)
        for labels, value in samples.get("nearrpc_rpc_requests_total", [])
    })


@pytest.fixture(scope="module")
def loaded(sample_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Counter[Key]]]:
    """A fresh server after the 200 requests; the labels they were sent as."""
    with serving("--store", sample_store, log=tmp_path_factory.mktemp("metrics") / "serve.log") as served:
        yield served.url, _send(served.url, _load(), connections=4)


def test_every_answer_is_counted_once_by_method_cause_and_status(
    loaded: tuple[str, Counter[Key]], record_property: Callable[[str, object], None]
) -> None:
    url, sent = loaded
    samples = _samples(url)
    assert _requests(samples) == sent
    counts = {labels["method"]: value for labels, value in samples["nearrpc_rpc_request_duration_seconds_count"]}
    by_method: Counter[str] = Counter()
    for (method, _, _), count in sent.items():
        by_method[method] += count
    assert counts == by_method
    assert set(counts) <= {*METHODS, "unknown", "none"}
    text = httpx.get(f"{url}/metrics", timeout=10).text
    excerpt = [line for line in text.splitlines()
               if line.startswith(("nearrpc_rpc_requests_total", "nearrpc_store_", "nearrpc_build_info"))
               or (line.startswith("nearrpc_rpc_request_duration_seconds_") and 'method="block"' in line)]
    record_property("terminal_summary", "/metrics after 200 requests:\n" + "\n".join(excerpt))


def test_store_gauges_and_build_info(loaded: tuple[str, Counter[Key]]) -> None:
    url, _ = loaded
    facts = sample_facts()
    samples = _samples(url)
    gauges = {name: values[0][1] for name, values in samples.items() if name.startswith("nearrpc_store_")}
    head_seconds = int(httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "block", "params": {
        "block_id": facts.head_height}}).json()["result"]["header"]["timestamp_nanosec"]) / 1e9
    age = gauges.pop("nearrpc_store_head_age_seconds")
    assert abs(age - (time.time() - head_seconds)) < 60
    assert gauges == {
        "nearrpc_store_up": 1,
        "nearrpc_store_blocks": len(facts.block_heights),
        "nearrpc_store_accounts": len(facts.all_accounts),
        "nearrpc_store_account_states": sum(len(heights) for _, heights in facts.state_heights),
        "nearrpc_store_access_keys": len(sample_chain().access_keys),
        "nearrpc_store_contract_codes": len(sample_chain().contract_codes),
        "nearrpc_store_contract_data": len(facts.contract_data),
        "nearrpc_store_head_height": facts.head_height,
        "nearrpc_store_final_height": facts.final_height,
    }
    assert samples["nearrpc_build_info"] == [({"version": SERVICE_VERSION, "interface_version": INTERFACE_VERSION}, 1)]


def _wait_for_workers(served: Served, count: int) -> None:
    """Until `count` workers have started (the first one answering is not enough)."""
    deadline = time.monotonic() + 60
    while True:
        started = [line for line in served.log_lines() if "Application startup complete" in line]
        if len(started) >= count:
            return
        assert time.monotonic() < deadline, served.log_lines()
        time.sleep(0.1)


def test_two_workers_add_up(sample_store: Path, tmp_path: Path) -> None:
    args = ("--store", sample_store, "--workers", "2", "--access-log", "--log-format", "json")
    with serving(*args, log=tmp_path / "serve.log") as served:
        _wait_for_workers(served, 2)
        sent = _send(served.url, _load(), connections=8)
        # any worker may answer a scrape: each must report the requests of both
        for _ in range(6):
            assert _requests(_samples(served.url)) == sent
        records = [json.loads(line) for line in served.log_lines()]
    answered_by = {r["pid"] for r in records if r["logger"] == "uvicorn.access" and '"POST / HTTP' in r["message"]}
    assert len(answered_by) == 2, answered_by


def test_no_metrics_turns_counting_off(sample_store: Path, tmp_path: Path) -> None:
    with serving("--store", sample_store, "--no-metrics", log=tmp_path / "serve.log") as served:
        assert httpx.get(f"{served.url}/metrics").status_code == 404
        assert httpx.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "block",
                                            "params": {"finality": "final"}}).status_code == 200


def test_store_gauges_follow_what_an_import_adds(sample_store: Path, tmp_path: Path) -> None:
    store = tmp_path / "growing.sqlite"
    shutil.copyfile(sample_store, store)
    facts = sample_facts()
    with serving("--store", store, log=tmp_path / "serve.log") as served:
        before = _samples(served.url)
        reader = open_store(store, "read")
        assert reader.account_json("gauge-test.localnet", facts.head_height) is None  # a new account
        view = reader.account_json("alice.localnet", facts.head_height)
        reader.close()
        assert view is not None
        with open_store(store, "write") as writer, writer.batch() as batch:
            batch.put_account_state("gauge-test.localnet", facts.head_height, view)
        after = _samples(served.url)
    added = {"nearrpc_store_accounts": 1, "nearrpc_store_account_states": 1, "nearrpc_store_blocks": 0}
    for name, more in added.items():
        assert after[name][0][1] == before[name][0][1] + more, name
