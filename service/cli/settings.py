"""Settings of the `nearrpc` commands: the one source of their defaults.

Each value comes from its command-line flag, else from its NEARRPC_* environment variable,
else from the default here; flags are declared from these fields, so help texts show these
defaults. A value out of range, from a flag or the environment, is refused in one line that
names where it came from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from nearrpc.cli.logs import LogFormat
from nearrpc.cli.refusals import value_problem
from nearrpc.store import StoreOptions, describe_location, is_file_location
from nearrpc.urls import scrub_urls

DEFAULT_STORE = "data/nearrpc.sqlite"
ENV_PREFIX = "NEARRPC_"
# the shortest --block-time: 20 blocks a second (at 1 ms a sandbox made ~300 blocks and 4 MB of store a second)
MIN_BLOCK_TIME: Final = 0.05
# what a browser sends as Origin: scheme://host[:port], or "null" (a file:// page, a sandbox)
_ORIGIN: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(\[[0-9A-Fa-f:.]+\]|[^/:?#\s\[\]@*]+)(:\d{1,5})?|null")

LogLevel = Literal["critical", "error", "warning", "info", "debug"]


class StoreSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="ignore", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

    store: str = Field(
        DEFAULT_STORE, min_length=1, description="the store: a path to an SQLite file or a postgresql:// URL"
    )
    # Read by every command under these names, whatever the command's own prefix.
    store_pool_size: int = Field(
        4,
        ge=1,
        le=100,
        validation_alias=f"{ENV_PREFIX}STORE_POOL_SIZE",
        description="connections per serving process to a PostgreSQL store (plus one that watches it)",
    )
    store_timeout: float = Field(
        5.0,
        ge=0.1,
        le=300,
        validation_alias=f"{ENV_PREFIX}STORE_TIMEOUT",
        description="seconds to connect to a PostgreSQL store; serving, to wait for a pooled connection and per "
        "lookup; writing, to wait for another writer",
    )

    def store_options(self) -> StoreOptions:
        return StoreOptions(pool_size=self.store_pool_size, timeout=self.store_timeout)


class LogSettings(BaseSettings):
    """How every command logs (imports read these from the environment only)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True, allow_inf_nan=False)

    log_level: LogLevel = Field("info", description="log level")
    log_format: LogFormat = Field("text", description="log line format: text, or json (one object a line)")


class ImportLogSettings(LogSettings):
    """The imports log their progress as lines where stderr is not a terminal."""

    progress_every: float = Field(
        10.0, gt=0, le=3600, description="seconds between progress log lines of an import when stderr is not a terminal"
    )


class ServeSettings(StoreSettings, LogSettings):
    host: str = Field("127.0.0.1", min_length=1, description="address to listen on")
    port: int = Field(3030, ge=0, le=65535, description="port to listen on (0: any free port, printed at start)")
    workers: int = Field(1, ge=1, le=256, description="worker processes")
    access_log: bool = Field(False, description="log every request (it costs about 20%% throughput)")
    answer_cache_mb: int = Field(64, ge=0, le=65536, description="memory for answers kept between requests, MiB")
    # compiled contracts kept across restarts (contracts/compiled_cache.py)
    compiled_cache: str | None = Field(
        None,
        description="folder for compiled contracts kept across restarts (default: <store>.compiled beside an "
        "SQLite store, none for a PostgreSQL one; off: in memory only)",
    )
    compiled_cache_mb: int = Field(
        1024, ge=1, le=1 << 20, description="disk for compiled contracts, MiB (past it the least recently used go)"
    )
    metrics: bool = Field(True, description="count requests for GET /metrics")
    # a quick check reads every page once: seconds for the sample, minutes for a store of many GB
    store_check: Literal["quick", "off"] = Field(
        "quick", description="check the store before serving: quick (refuse a damaged store), or off"
    )
    view_call_timeout: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="seconds a view call run on a worker may take, from the moment a worker "
        'takes it up, beside its gas limit; a slower one is stopped and answered INTERNAL_ERROR "Timeout" as '
        "nearcore answers a query its view client did not answer in time",
    )
    max_slow_view_calls: int = Field(
        8,
        ge=1,
        le=1024,
        description="view calls each worker holds in its slow lane (those still running 0.1 s "
        "after they began, run on two threads of lowered priority), running or waiting; past it a slow call is "
        "answered INTERNAL_ERROR at once, so slow calls never hold fresh ones",
    )
    view_memory_mb: int = Field(
        256,
        ge=1,
        le=1 << 20,
        description="MiB the registers and return values of the view calls running on a "
        "worker may hold together; a call that would take more is stopped and answered INTERNAL_ERROR",
    )
    module_cache_mb: int = Field(
        256,
        ge=1,
        le=1 << 20,
        description="MiB of compiled contracts kept in memory (each counts its code's size; "
        "at most 64 of them), past which the least recently used go",
    )
    store_close_timeout: float = Field(
        5.0,
        gt=0,
        le=300,
        description="seconds a stopping server waits for the store to close (PostgreSQL "
        "connections) before it leaves them",
    )
    # "*" (the default, as nearcore's) allows any origin; "" none; else a comma-separated list
    cors_origins: Annotated[tuple[str, ...], NoDecode] = Field(
        ("*",), description='allowed CORS origins, comma-separated, "*" for any, "" for none'
    )

    # every connection ends (nearrpc.http.connections)
    keep_alive_timeout: float = Field(
        15.0,
        gt=0,
        le=3600,
        description="seconds a connection may wait idle, before its first request and between "
        "requests, before it is closed",
    )
    request_timeout: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="seconds a request's headers and body may take to arrive, from its first "
        "byte; a slower one is answered 408 and closed",
    )
    max_connections: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="connections each worker holds at most; at the cap a new one closes "
        "the one waiting longest on its client (idle or slow to send) if it has waited over a second, else it is "
        "answered 503 and closed unread (default: the open-file limit less 256)",
    )
    max_connections_per_address: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="connections each worker holds at most from one peer address (an "
        "IPv6 peer's /64); a new one past it closes one of the address's own waiting over a second, else it is "
        "answered 503 and closed unread; at the cap the connections that give way are those of the address holding "
        "the most (default: half of --max-connections; as much as "
        "--max-connections behind a proxy, whose connections all come from its address)",
    )

    # a sandbox (`--sandbox`): the server executes transactions and makes blocks on its store
    sandbox: bool = Field(
        False,
        description="accept transactions and make blocks on the store (send_tx, the broadcasts, "
        "sandbox_patch_state, sandbox_fast_forward, snapshot and revert), in one process (--workers 1)",
    )
    block_time: float | None = Field(
        None,
        ge=MIN_BLOCK_TIME,
        le=3600,
        description="with --sandbox: make a block every SECONDS, empty or not, "
        f"instead of automine; at least {MIN_BLOCK_TIME:g} (faster, the store would grow by megabytes a second)",
    )

    fixed_clock: bool = Field(
        False,
        description="with --sandbox: each block's timestamp is its parent's plus one millisecond, never "
        "the wall clock, so the same sends make the same chain, block and transaction hashes included, at every run "
        "(a recorded sandboxed fork replays byte for byte); fast-forwarded blocks too step one millisecond each",
    )

    # a fork of a live node (`--upstream`): what it may ask of the node, and how long a miss may take
    upstream: str | None = Field(
        None,
        description="a NEAR JSON-RPC node (http:// or https:// URL) to fork: a request the store cannot answer "
        "is asked there, kept in the store and answered",
    )
    record_mode: Literal["new", "none"] = Field(
        "new",
        description="with --upstream: new (fetch and keep what the store lacks), or none (never write the "
        "store: serve it alone, as without --upstream)",
    )
    fork_height: int | None = Field(
        None,
        ge=0,
        le=(1 << 63) - 1,
        description="with --upstream: pin the fork's head at this (final) height, so "
        "final and optimistic stay put; by default they follow the upstream's at each request",
    )
    verify_calls: bool = Field(
        False,
        description="with --upstream: run every view call here and ask the upstream too, answering the local "
        "result; each difference is counted (nearrpc_view_call_differences_total) and logged",
    )
    upstream_concurrency: int = Field(4, ge=1, le=256, description="requests in flight to the upstream at most")
    upstream_rate: float = Field(
        20.0, ge=0, le=100_000, description="requests per second to the upstream at most (0: no bound)"
    )
    upstream_timeout: float = Field(5.0, gt=0, le=600, description="seconds per request to the upstream")
    upstream_retries: int = Field(
        2, ge=0, le=20, description="retries of an upstream request after transport errors, HTTP 408/429/5xx"
    )
    upstream_max_answer_mb: int = Field(
        32,
        ge=1,
        le=4096,
        description="the largest upstream answer a fork reads, in MB (a larger one is refused "
        "as it arrives, and nothing of it is kept)",
    )
    miss_timeout: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="seconds a miss may take, retries included, before it answers INTERNAL_ERROR (nothing is kept)",
    )
    fork_fetches_per_call: int = Field(
        200,
        ge=1,
        le=1_000_000,
        description="upstream requests one view call may cause for the contract storage "
        "it reads (a state of up to 50,000 bytes is one request); past it the call is answered INTERNAL_ERROR",
    )

    @field_validator("block_time")
    @classmethod
    def _block_time_needs_a_sandbox(cls, value: float | None, info: ValidationInfo) -> float | None:
        # refused here, not once the server starts, so the refusal names what was set: the flag
        # or its variable (`sandbox` is validated before this field)
        if value is not None and not info.data.get("sandbox"):
            raise ValueError("sets how often the sandbox makes a block: it needs --sandbox")
        return value

    @field_validator("fixed_clock")
    @classmethod
    def _fixed_clock_needs_a_sandbox(cls, value: bool, info: ValidationInfo) -> bool:
        if value and not info.data.get("sandbox"):
            raise ValueError("fixes the sandbox's block timestamps: it needs --sandbox")
        return value

    @field_validator("upstream")
    @classmethod
    def _check_upstream(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an http:// or https:// URL of a NEAR JSON-RPC node")
        try:
            parts.port  # noqa: B018  # raises for a port out of range
        except ValueError as exc:
            raise ValueError(f"the URL's port is not a port ({exc})") from None
        return value

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(origin.strip() for origin in value.split(",") if origin.strip())
        return value

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # a browser's Origin header is scheme://host[:port] exactly: "example.com" or a trailing
        # "/" would match no request, and the browser's calls would fail without a word here
        for origin in value:
            if origin != "*" and not _ORIGIN.fullmatch(origin):
                raise ValueError(
                    f"{origin!r} is not an origin: write scheme://host or scheme://host:port, without a path"
                )
        return value

    def to_env(self) -> dict[str, str]:
        """The environment that reproduces these settings in a worker process."""
        return (
            {
                f"{ENV_PREFIX}STORE": self.store,
                f"{ENV_PREFIX}STORE_POOL_SIZE": str(self.store_pool_size),
                f"{ENV_PREFIX}STORE_TIMEOUT": repr(self.store_timeout),
                f"{ENV_PREFIX}HOST": self.host,
                f"{ENV_PREFIX}PORT": str(self.port),
                f"{ENV_PREFIX}WORKERS": str(self.workers),
                f"{ENV_PREFIX}LOG_LEVEL": self.log_level,
                f"{ENV_PREFIX}LOG_FORMAT": self.log_format,
                f"{ENV_PREFIX}METRICS": "1" if self.metrics else "0",
                f"{ENV_PREFIX}ACCESS_LOG": "1" if self.access_log else "0",
                f"{ENV_PREFIX}CORS_ORIGINS": ",".join(self.cors_origins),
                f"{ENV_PREFIX}ANSWER_CACHE_MB": str(self.answer_cache_mb),
                f"{ENV_PREFIX}COMPILED_CACHE_MB": str(self.compiled_cache_mb),
                f"{ENV_PREFIX}STORE_CLOSE_TIMEOUT": repr(self.store_close_timeout),
                f"{ENV_PREFIX}VIEW_CALL_TIMEOUT": repr(self.view_call_timeout),
                f"{ENV_PREFIX}MAX_SLOW_VIEW_CALLS": str(self.max_slow_view_calls),
                f"{ENV_PREFIX}VIEW_MEMORY_MB": str(self.view_memory_mb),
                f"{ENV_PREFIX}MODULE_CACHE_MB": str(self.module_cache_mb),
                f"{ENV_PREFIX}UPSTREAM": self.upstream or "",
                f"{ENV_PREFIX}RECORD_MODE": self.record_mode,
                f"{ENV_PREFIX}VERIFY_CALLS": "1" if self.verify_calls else "0",
                f"{ENV_PREFIX}UPSTREAM_CONCURRENCY": str(self.upstream_concurrency),
                f"{ENV_PREFIX}UPSTREAM_RATE": repr(self.upstream_rate),
                f"{ENV_PREFIX}UPSTREAM_TIMEOUT": repr(self.upstream_timeout),
                f"{ENV_PREFIX}UPSTREAM_RETRIES": str(self.upstream_retries),
                f"{ENV_PREFIX}UPSTREAM_MAX_ANSWER_MB": str(self.upstream_max_answer_mb),
                f"{ENV_PREFIX}MISS_TIMEOUT": repr(self.miss_timeout),
                f"{ENV_PREFIX}FORK_FETCHES_PER_CALL": str(self.fork_fetches_per_call),
                f"{ENV_PREFIX}KEEP_ALIVE_TIMEOUT": repr(self.keep_alive_timeout),
                f"{ENV_PREFIX}REQUEST_TIMEOUT": repr(self.request_timeout),
                f"{ENV_PREFIX}SANDBOX": "1" if self.sandbox else "0",
                f"{ENV_PREFIX}FIXED_CLOCK": "1" if self.fixed_clock else "0",
            }
            | ({} if self.block_time is None else {f"{ENV_PREFIX}BLOCK_TIME": repr(self.block_time)})
            | ({} if self.fork_height is None else {f"{ENV_PREFIX}FORK_HEIGHT": str(self.fork_height)})
            | ({} if self.compiled_cache is None else {f"{ENV_PREFIX}COMPILED_CACHE": self.compiled_cache})
            | ({} if self.max_connections is None else {f"{ENV_PREFIX}MAX_CONNECTIONS": str(self.max_connections)})
            | (
                {}
                if self.max_connections_per_address is None
                else {f"{ENV_PREFIX}MAX_CONNECTIONS_PER_ADDRESS": str(self.max_connections_per_address)}
            )
        )

    def compiled_cache_folder(self) -> Path | None:
        """Where compiled contracts are kept: the folder given, else `<store>.compiled` beside an
        SQLite store; None when turned off (`off`, "") or for a PostgreSQL store not given one."""
        if self.compiled_cache is not None:
            given = self.compiled_cache.strip()
            return None if given.lower() in ("", "off") else Path(given)
        return Path(f"{self.store}.compiled") if is_file_location(self.store) else None

    def forks(self) -> bool:
        """Whether the server reads through to an upstream (and writes the store)."""
        return self.upstream is not None and self.record_mode == "new"


class RecorderSettings(StoreSettings):
    """`nearrpc import rpc`: how hard to press the node."""

    model_config = SettingsConfigDict(
        env_prefix=f"{ENV_PREFIX}RECORD_", extra="ignore", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

    store: str = Field(DEFAULT_STORE, min_length=1, validation_alias=f"{ENV_PREFIX}STORE")
    concurrency: int = Field(4, ge=1, le=256, description="requests in flight at once")
    batch_heights: int = Field(50, ge=1, description="heights per stored batch")
    retries: int = Field(5, ge=0, le=100, description="retries of a request after transport errors, HTTP 408/429/5xx")
    backoff: float = Field(0.5, ge=0, le=60, description="seconds before the first retry, doubled each time up to 10 s")
    timeout: float = Field(30.0, gt=0, le=3600, description="seconds per request")


class ConformSettings(BaseSettings):
    """`nearrpc conform`: how hard to press the endpoint under test."""

    model_config = SettingsConfigDict(
        env_prefix=f"{ENV_PREFIX}CONFORM_", extra="ignore", frozen=True, allow_inf_nan=False
    )

    max_requests: int = Field(200, ge=1, le=100_000, description="requests at most, retries included")
    rate: float = Field(10.0, gt=0, le=1000, description="requests per second at most")
    timeout: float = Field(10.0, gt=0, le=600, description="seconds per request")
    retries: int = Field(3, ge=0, le=20, description="retries after transport errors, HTTP 429 and 5xx gateway answers")


class SettingsError(Exception):
    """A setting's value is refused; the message is one line naming the flag or variable."""


SettingsT = TypeVar("SettingsT", bound=BaseSettings)


def env_name(cls: type[BaseSettings], field: str) -> str:
    """The environment variable a field is read from."""
    alias = cls.model_fields[field].validation_alias
    prefix = cls.model_config.get("env_prefix", "")
    return alias if isinstance(alias, str) else f"{prefix}{field}".upper()


def _source(cls: type[BaseSettings], field: str, flags: Mapping[str, Any]) -> str:
    return "--" + field.replace("_", "-") if field in flags else env_name(cls, field)


def load_settings(cls: type[SettingsT], flags: Mapping[str, Any]) -> SettingsT:
    """The settings from `flags` (given ones only), the environment and the defaults."""
    given = {name: value for name, value in flags.items() if value is not None}
    try:
        return cls(**given)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        where = _source(cls, field, given) if field in cls.model_fields else field
        value = error["input"]
        if isinstance(value, str):  # a URL is shown without its credentials (an upstream's API key)
            shown: object = describe_location(value) if field == "store" else scrub_urls(value)
        else:
            shown = value
        raise SettingsError(f"{where}={shown!r}: {value_problem(error)}") from None
