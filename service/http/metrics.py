"""Prometheus metrics: JSON-RPC answers counted where they are produced, the store read at scrape.

- `observe_rpc(method, cause, status, seconds)` is the one call the JSON-RPC endpoint makes per
  answer: a counter by method, error cause and HTTP status, and a latency histogram by method.
  Label children are cached, so an answer costs two dictionary lookups and two increments.
- The store gauges (head and final height, blocks, accounts, age of the head block) and the
  build info are computed when /metrics is scraped (`StoreCollector`, `BuildInfoCollector`),
  never per request.
- With several workers, `nearrpc serve` points PROMETHEUS_MULTIPROC_DIR at a fresh folder before
  they start; prometheus_client then keeps the counters in files there, and any worker's
  /metrics adds up those of all workers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Final

import orjson
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.responses import Response

from nearrpc.generated.methods import METHODS
from nearrpc.store import ServingReader
from nearrpc.version import INTERFACE_VERSION, SERVICE_VERSION

MULTIPROCESS_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"

# Labels stay bounded: method names outside the interface are one value, and so is "none".
_METHODS: Final = frozenset(METHODS)
UNKNOWN_METHOD: Final = "unknown"  # a method name the interface does not have
NO_LABEL: Final = "none"  # no method (the body was not a JSON-RPC request), or no error

# Answers take well under a millisecond from cache, a few from the store, more under load.
_LATENCY_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

# the *_created series say when a label set was first seen: noise here, and absent with workers
disable_created_metrics()  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated

_REQUESTS = Counter(
    "nearrpc_rpc_requests",
    "JSON-RPC answers by method, error cause (none: a result) and HTTP status",
    ("method", "cause", "status"),
    registry=None,
)
_LATENCY = Histogram(
    "nearrpc_rpc_request_duration_seconds",
    "Time from a JSON-RPC request's arrival to its answer, by method",
    ("method",),
    buckets=_LATENCY_BUCKETS,
    registry=None,
)

_FORK_LOOKUPS = Counter(
    "nearrpc_fork_lookups",
    "A fork's lookups by outcome: hit (the store answered) or miss (the upstream was asked)",
    ("outcome",),
    registry=None,
)
_UPSTREAM_REQUESTS = Counter(
    "nearrpc_upstream_requests",
    "A fork's requests to its upstream by method and outcome (result, error, unreachable, timeout)",
    ("method", "outcome"),
    registry=None,
)
_UPSTREAM_LATENCY = Histogram(
    "nearrpc_upstream_request_duration_seconds",
    "Time a fork's request to its upstream took, retries included, by method",
    ("method",),
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=None,
)

_VIEW_CALLS = Counter(
    "nearrpc_view_calls",
    "Contract view calls answered, by path (local: executed here; upstream: a fork's upstream answered) "
    "and reason (executed; failed: the contract failed as nearcore reports; host_function: not implemented here; "
    "deadline, cancelled, shutdown: stopped past its --view-call-timeout, its client gone, the server stopping; "
    "busy, memory: refused, the slow lane full (--max-slow-view-calls) or the memory budget (--view-memory-mb))",
    ("path", "reason"),
    registry=None,
)
_VIEW_CALL_DIFFERENCES = Counter(
    "nearrpc_view_call_differences",
    "View calls whose local answer differed from the upstream's (verify mode; each is logged)",
    registry=None,
)

_children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}


def observe_rpc(method: str | None, cause: str | None, status: int, seconds: float) -> None:
    """Count one answer: `method` as requested (None: no request could be read), `cause` the
    error cause name (None: a result), the HTTP status, and the seconds it took."""
    label = NO_LABEL if method is None else method if method in _METHODS else UNKNOWN_METHOD
    key = (label, cause or NO_LABEL, status)
    child = _children.get(key)
    if child is None:
        child = _children[key] = (_REQUESTS.labels(label, key[1], str(status)), _LATENCY.labels(label))
    child[0].inc()
    child[1].observe(seconds)


def observe_fork_lookup(outcome: str) -> None:
    _FORK_LOOKUPS.labels(outcome).inc()


def observe_upstream(method: str, outcome: str, seconds: float) -> None:
    """Count one request a fork made to its upstream (methods: the few a fork asks)."""
    _UPSTREAM_REQUESTS.labels(method, outcome).inc()
    _UPSTREAM_LATENCY.labels(method).observe(seconds)


_view_call_children: dict[tuple[str, str], Counter] = {}  # a handful: the paths by the reasons


def observe_view_call(path: str, reason: str) -> None:
    child = _view_call_children.get((path, reason))
    if child is None:
        child = _view_call_children[path, reason] = _VIEW_CALLS.labels(path, reason)
    child.inc()


def observe_view_call_difference() -> None:
    _VIEW_CALL_DIFFERENCES.inc()


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


class StoreCollector(Collector):
    """What the store holds, read when scraped (`await read()` before rendering: the reader is
    awaitable, a collector is not). Nothing is reported for what the store lacks (no blocks: no
    heights); a store that fails to answer reports nearrpc_store_up 0."""

    def __init__(self, reader: ServingReader) -> None:
        self._reader = reader
        self._accounts: tuple[int, int] | None = None  # (account state rows, accounts) last counted
        self._generation: int | None = None  # of the store they were counted in
        self._found: list[Metric] = []

    async def _account_count(self, state_rows: int) -> int:
        # counting distinct accounts reads an index; redo it only when states were added
        if self._accounts is None or self._accounts[0] != state_rows:
            self._accounts = (state_rows, await self._reader.account_count())
        return self._accounts[1]

    async def read(self) -> None:
        try:
            generation = self._reader.version().generation  # also how a replaced file is noticed
            if generation != self._generation:
                self._accounts, self._generation = None, generation  # counted in another store
            self._found = await self._store_metrics()
        except Exception:  # a store that cannot answer is a reading, not a failed scrape
            self._found = []

    async def _store_metrics(self) -> list[Metric]:
        info = await self._reader.info()
        found: list[Metric] = [
            _gauge("nearrpc_store_blocks", "Blocks in the store, fork blocks included", info.block_count),
            _gauge(
                "nearrpc_store_accounts",
                "Accounts with a stored state (deleted ones included)",
                await self._account_count(info.account_state_count),
            ),
            _gauge(
                "nearrpc_store_account_states",
                "Stored account states (one per account and change)",
                info.account_state_count,
            ),
            _gauge(
                "nearrpc_store_access_keys",
                "Stored access key states (one per key and change, deletions included)",
                info.access_key_count,
            ),
            _gauge(
                "nearrpc_store_contract_codes", "Stored contract codes (one per code hash)", info.contract_code_count
            ),
            _gauge(
                "nearrpc_store_contract_data",
                "Stored contract state rows (one per account, key and change, removals included)",
                info.contract_data_count,
            ),
        ]
        head = await self._reader.head()
        if head is not None:
            found.append(_gauge("nearrpc_store_head_height", "Height of the head (optimistic) block", head.height))
            final = await self._reader.block_by_hash(head.last_final_block)
            if final is not None:
                found.append(
                    _gauge("nearrpc_store_final_height", "Height of the head's last final block", final.height)
                )
            timestamp_ns: int = orjson.loads(head.view_json)["header"]["timestamp"]
            found.append(
                _gauge(
                    "nearrpc_store_head_age_seconds",
                    "Seconds since the head block's timestamp",
                    time.time() - timestamp_ns / 1e9,
                )
            )
        return found

    def collect(self) -> Iterator[Metric]:
        yield _gauge("nearrpc_store_up", "1 when the store answered this scrape", 1 if self._found else 0)
        yield from self._found


class BuildInfoCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "nearrpc_build_info",
            "The service's version and the interface version it serves",
            labels=("version", "interface_version"),
        )
        info.add_metric((SERVICE_VERSION, INTERFACE_VERSION), 1)
        yield info


def scrape_registry(store_gauges: StoreCollector) -> CollectorRegistry:
    """The registry /metrics renders: this process's counters, or all workers' ones."""
    registry = CollectorRegistry()
    if os.environ.get(MULTIPROCESS_ENV):
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # unannotated upstream
    else:
        for counted in (
            _REQUESTS,
            _LATENCY,
            _FORK_LOOKUPS,
            _UPSTREAM_REQUESTS,
            _UPSTREAM_LATENCY,
            _VIEW_CALLS,
            _VIEW_CALL_DIFFERENCES,
        ):
            registry.register(counted)
    registry.register(store_gauges)
    registry.register(BuildInfoCollector())
    return registry


def metrics_response(registry: CollectorRegistry) -> Response:
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
