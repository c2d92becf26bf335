"""Settings: one source of defaults that flags and NEARRPC_* variables both fill, ranges
checked, and a bad value refused in one line naming where it came from."""

from __future__ import annotations

import pytest
from pydantic_settings import BaseSettings

from nearrpc.cli.settings import (
    DEFAULT_STORE,
    ConformSettings,
    ImportLogSettings,
    RecorderSettings,
    ServeSettings,
    SettingsError,
    StoreSettings,
    load_settings,
)
from tests.support.cli import nearrpc


@pytest.fixture(autouse=True)
def _no_nearrpc_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in [n for n in os.environ if n.startswith("NEARRPC_")]:
        monkeypatch.delenv(name)


def test_defaults() -> None:
    settings = load_settings(ServeSettings, {})
    assert (settings.host, settings.port, settings.store, settings.workers) == ("127.0.0.1", 3030, DEFAULT_STORE, 1)
    assert (settings.log_level, settings.access_log, settings.cors_origins) == ("info", False, ("*",))
    assert (settings.log_format, settings.metrics) == ("text", True)
    assert load_settings(ImportLogSettings, {}).progress_every == 10.0
    assert load_settings(ServeSettings, {"port": "0"}).port == 0  # any free port
    recorder = load_settings(RecorderSettings, {})
    assert (recorder.concurrency, recorder.batch_heights, recorder.retries) == (4, 50, 5)
    assert (recorder.backoff, recorder.timeout, recorder.store) == (0.5, 30.0, DEFAULT_STORE)


def test_a_flag_beats_the_environment_which_beats_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEARRPC_PORT", "4000")
    monkeypatch.setenv("NEARRPC_STORE", "env.sqlite")
    monkeypatch.setenv("NEARRPC_CORS_ORIGINS", "https://a.example, https://b.example")
    monkeypatch.setenv("NEARRPC_ACCESS_LOG", "1")
    settings = load_settings(ServeSettings, {"port": "5000", "store": None})
    assert (settings.port, settings.store, settings.access_log) == (5000, "env.sqlite", True)
    assert settings.cors_origins == ("https://a.example", "https://b.example")
    assert load_settings(ServeSettings, {"cors_origins": ""}).cors_origins == ()
    # every command reads the same store variable; the recorder's own knobs have their prefix
    monkeypatch.setenv("NEARRPC_RECORD_RETRIES", "9")
    recorder = load_settings(RecorderSettings, {"store": "flag.sqlite"})
    assert (recorder.store, recorder.retries) == ("flag.sqlite", 9)
    assert load_settings(StoreSettings, {}).store == "env.sqlite"


def test_settings_reproduce_themselves_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings(ServeSettings, {"port": "5001", "cors_origins": "https://x.example", "workers": "2"})
    for name, value in settings.to_env().items():
        monkeypatch.setenv(name, value)
    assert ServeSettings() == settings


@pytest.mark.parametrize(
    ("cls", "flags", "environment", "message"),
    [
        (ServeSettings, {"port": "abc"}, {}, "--port='abc': expected a whole number"),
        (ServeSettings, {"port": "-1"}, {}, "--port='-1': must be 0 or more"),
        (ServeSettings, {"port": "70000"}, {}, "--port='70000': must be 65535 or less"),
        (ServeSettings, {"workers": "0"}, {}, "--workers='0': must be 1 or more"),
        (ServeSettings, {}, {"NEARRPC_PORT": "abc"}, "NEARRPC_PORT='abc': expected a whole number"),
        (ServeSettings, {}, {"NEARRPC_WORKERS": "two"}, "NEARRPC_WORKERS='two': expected a whole number"),
        (ServeSettings, {}, {"NEARRPC_ACCESS_LOG": "maybe"}, "NEARRPC_ACCESS_LOG='maybe': expected on or off"),
        (ServeSettings, {}, {"NEARRPC_LOG_LEVEL": "loud"}, "NEARRPC_LOG_LEVEL='loud': expected 'critical'"),
        (ServeSettings, {}, {"NEARRPC_LOG_FORMAT": "xml"}, "NEARRPC_LOG_FORMAT='xml': expected 'text'"),
        (ServeSettings, {}, {"NEARRPC_METRICS": "perhaps"}, "NEARRPC_METRICS='perhaps': expected on or off"),
        (ImportLogSettings, {}, {"NEARRPC_PROGRESS_EVERY": "0"}, "NEARRPC_PROGRESS_EVERY='0': must be above 0"),
        (ServeSettings, {"store": ""}, {}, "--store='': must not be empty"),
        (RecorderSettings, {"retries": "-1"}, {}, "--retries='-1': must be 0 or more"),
        (RecorderSettings, {}, {"NEARRPC_RECORD_TIMEOUT": "0"}, "NEARRPC_RECORD_TIMEOUT='0': must be above 0"),
        (RecorderSettings, {"concurrency": "0"}, {}, "--concurrency='0': must be 1 or more"),
        (RecorderSettings, {"backoff": "soon"}, {}, "--backoff='soon': expected a number"),
        (ServeSettings, {"store_pool_size": "0"}, {}, "--store-pool-size='0': must be 1 or more"),
        (ServeSettings, {}, {"NEARRPC_STORE_POOL_SIZE": "101"}, "NEARRPC_STORE_POOL_SIZE='101': must be 100 or less"),
        (ServeSettings, {"store_timeout": "0"}, {}, "--store-timeout='0': must be 0.1 or more"),
        (RecorderSettings, {}, {"NEARRPC_STORE_TIMEOUT": "soon"}, "NEARRPC_STORE_TIMEOUT='soon': expected a number"),
    ],
)
def test_a_bad_value_is_named_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
    cls: type[StoreSettings | ImportLogSettings],
    flags: dict[str, str],
    environment: dict[str, str],
    message: str,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as refused:
        load_settings(cls, flags)
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("args", "environment", "expected"),
    [
        (("serve", "--port", "abc"), {}, "nearrpc serve: --port='abc': expected a whole number"),
        (("serve", "--workers", "0"), {}, "nearrpc serve: --workers='0': must be 1 or more"),
        (("serve", "--max-connections-per-address", "0"), {},
         "nearrpc serve: --max-connections-per-address='0': must be 1 or more"),
        (("serve",), {"NEARRPC_PORT": "abc"}, "nearrpc serve: NEARRPC_PORT='abc': expected a whole number"),
        (("serve",), {"NEARRPC_WORKERS": "two"}, "nearrpc serve: NEARRPC_WORKERS='two': expected a whole number"),
        (("serve", "--port", "70000"), {}, "nearrpc serve: --port='70000': must be 65535 or less"),
        (("import", "blocks", "x.json"), {"NEARRPC_LOG_FORMAT": "xml"},
         "nearrpc import blocks: NEARRPC_LOG_FORMAT='xml'"),
        (
            ("import", "rpc", "--url", "http://127.0.0.1:9", "--from-height", "1", "--to-height", "2",
             "--retries", "-1"),
            {},
            "nearrpc import rpc: --retries='-1': must be 0 or more",
        ),
        (("import", "blocks", "x.json"), {"NEARRPC_STORE": ""},
         "nearrpc import blocks: NEARRPC_STORE='': must not be empty"),
    ],
)
def test_the_command_refuses_a_bad_value_in_one_line(
    args: tuple[str, ...], environment: dict[str, str], expected: str
) -> None:
    done = nearrpc(*args, env=environment, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(expected) and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == ""


def test_store_options_reach_every_command_and_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEARRPC_STORE_POOL_SIZE", "9")
    monkeypatch.setenv("NEARRPC_STORE_TIMEOUT", "2.5")
    for cls in (StoreSettings, ServeSettings, RecorderSettings):
        options = load_settings(cls, {}).store_options()
        assert (options.pool_size, options.timeout) == (9, 2.5)
    settings = load_settings(ServeSettings, {"store_pool_size": "3"})
    assert (settings.store_pool_size, settings.store_timeout) == (3, 2.5)
    for name, value in settings.to_env().items():
        monkeypatch.setenv(name, value)
    assert ServeSettings() == settings


def test_help_shows_each_settings_variable_and_default() -> None:
    serve = nearrpc("serve", "--help", timeout=60).stdout
    for text in ("NEARRPC_PORT, default 3030", "NEARRPC_WORKERS, default 1", f"NEARRPC_STORE, default {DEFAULT_STORE}",
                 "NEARRPC_CORS_ORIGINS, default *", "NEARRPC_ACCESS_LOG, default off",
                 "NEARRPC_LOG_FORMAT, default text", "NEARRPC_METRICS, default on", "--no-metrics", "--sample",
                 "NEARRPC_STORE_POOL_SIZE, default 4", "NEARRPC_STORE_TIMEOUT, default 5.0",
                 "NEARRPC_UPSTREAM, unset by default", "NEARRPC_FORK_HEIGHT, unset by default"):
        assert text in " ".join(serve.split()), text
    record = " ".join(nearrpc("import", "rpc", "--help", timeout=60).stdout.split())
    for text in ("NEARRPC_RECORD_RETRIES, default 5", "NEARRPC_RECORD_BACKOFF, default 0.5", "NEARRPC_STORE"):
        assert text in record, text


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("serve", "--log-format", "xml"),
         "nearrpc serve: argument --log-format: invalid choice: 'xml' (choose from 'text', 'json') "
         "(see nearrpc serve --help)"),
        (("import", "rpc", "--from-height", "x"),
         "nearrpc import rpc: argument --from-height: 'x' is not an integer (see nearrpc import rpc --help)"),
        (("import", "rpc", "--url", "http://127.0.0.1:9", "--from-height", "-5", "--to-height", "3"),
         "nearrpc import rpc: argument --from-height: '-5' is negative; heights start at 0 "
         "(see nearrpc import rpc --help)"),
        (("import", "rpc", "--url", "htp://127.0.0.1:9", "--from-height", "0", "--to-height", "3"),
         "nearrpc import rpc: argument --url: 'htp://127.0.0.1:9': expected an http:// or https:// URL "
         "(see nearrpc import rpc --help)"),
        (("store", "copy", "only-one"),
         "nearrpc store copy: the following arguments are required: DESTINATION (see nearrpc store copy --help)"),
        ((), "nearrpc: the following arguments are required: COMMAND (see nearrpc --help)"),
    ],
)  # fmt: skip
def test_what_the_parser_refuses_is_one_line_too(args: tuple[str, ...], line: str) -> None:
    done = nearrpc(*args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n")


def _upper_bounds() -> list[tuple[type[BaseSettings], str, float]]:
    from annotated_types import Le

    classes: list[type[BaseSettings]] = [ServeSettings, RecorderSettings, ImportLogSettings, ConformSettings]
    return [
        (cls, name, bound.le)
        for cls in classes
        for name, info in cls.model_fields.items()
        for bound in info.metadata
        if isinstance(bound, Le) and isinstance(bound.le, int | float)
    ]


@pytest.mark.parametrize(("cls", "name", "bound"), _upper_bounds(), ids=lambda value: getattr(value, "__name__", value))
def test_every_upper_bound_is_kept(cls: type[BaseSettings], name: str, bound: float) -> None:
    needs = _NEEDS.get(name, {})
    assert load_settings(cls, {**needs, name: str(bound)})
    flag = "--" + name.replace("_", "-")
    with pytest.raises(SettingsError, match=rf"^{flag}='{bound + 1}': must be {bound} or less$"):
        load_settings(cls, {**needs, name: str(bound + 1)})


# the settings a bounded one is refused without
_NEEDS: dict[str, dict[str, object]] = {"block_time": {"sandbox": True}}


def test_the_bounds_an_operator_meets_first_are_among_them() -> None:
    bounded = {(cls.__name__, name) for cls, name, _ in _upper_bounds()}
    assert {("ServeSettings", "workers"), ("ServeSettings", "port"), ("RecorderSettings", "retries"),
            ("ServeSettings", "store_pool_size"), ("ConformSettings", "max_requests")} <= bounded


def test_cors_origins_are_taken_as_browsers_send_them() -> None:
    """What a browser sends as Origin is accepted; what would match no request is refused."""
    for given in ("*", "null", "http://localhost:5173", "https://app.example", "http://[::1]:8080", ""):
        assert load_settings(ServeSettings, {"cors_origins": given}).cors_origins == ((given,) if given else ())
    for wrong in ("https://app.example/", "app.example", "https://app.example/path", "https://*.example"):
        with pytest.raises(SettingsError, match=r"is not an origin"):
            load_settings(ServeSettings, {"cors_origins": wrong})
