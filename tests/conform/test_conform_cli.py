"""`nearrpc conform`, run as a user runs it, against this service, against a server with
seeded defects, against a flaky one, and against real nearcore answers served by a stub."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conform.broken_server import DEFECTS, FLAKY, broken_server
from tests.conform.captured_stub import captured_node
from tests.support.cli import nearrpc
from tests.support.http_stub import plain_web_server
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.live

FAST = ("--rate", "1000")  # loopback only; the default (10 per second) is for real nodes
REFERENCE_FORMS = (
    "block_id height", "block_id hash", "finality optimistic", "finality near-final", "finality final",
    "sync_checkpoint genesis", "sync_checkpoint earliest_available",
)
PARAMETERLESS_FORMS = ("params omitted", "params null", "params []", "params {}")
# every request form the issue names, per method
FORMS = {
    *(("genesis_config", form) for form in PARAMETERLESS_FORMS),
    *(("client_config", form) for form in PARAMETERLESS_FORMS),
    *(("block", form) for form in (*REFERENCE_FORMS, "[block_id] height", "[block_id] hash")),
    *(("EXPERIMENTAL_protocol_config", form) for form in REFERENCE_FORMS),
    *(("EXPERIMENTAL_view_account", form) for form in REFERENCE_FORMS),
    # beyond interface 1.2.14
    ("status", "params null"), ("status", "params []"),
    ("gas_price", "[null]"), ("gas_price", "[height]"), ("gas_price", "[hash]"),
    *(("query", f"view_account {form}") for form in REFERENCE_FORMS),
    ("query", "view_access_key_list finality final"), ("query", "view_code finality final"),
    ("query", '["account/<id>", ""]'),
    *(VIEW_CALL_FORMS := {
        ("query", "call_function finality final"), ("query", '["call/<id>/get_num", ""]'),
        ("EXPERIMENTAL_call_function", "finality final"),
        ("query", "view_state finality final"), ("query", '["contract/<id>", ""]'),
        ("EXPERIMENTAL_view_state", "finality final"),
    }),
    ("EXPERIMENTAL_view_access_key_list", "finality final"), ("EXPERIMENTAL_view_code", "finality final"),
    # the reads of what happened (issue 30)
    *(("chunk", form) for form in ("{chunk_id}", "{block_id height, shard_id}", "{block_id hash, shard_id}",
                                   "[chunk_id]", "[[block_id, shard_id]]")),
    *((method, form) for method in ("tx", "EXPERIMENTAL_tx_status") for form in (
        "{tx_hash, sender_account_id}", "{tx_hash, sender_account_id, wait_until}", "[hash, sender]")),
    ("EXPERIMENTAL_receipt", "{receipt_id}"),
    ("validators", "[null]"), ("validators", '{"latest": null}'), ("validators", '"latest"'),
    ("validators", "{epoch_id} of the final block"),
    ("validators", "{block_id} final height"),
    ("EXPERIMENTAL_validators_ordered", "[null]"), ("EXPERIMENTAL_validators_ordered", '{"block_id": null}'),
    ("EXPERIMENTAL_validators_ordered", "{block_id} final height"), ("EXPERIMENTAL_validators_ordered", "[final hash]"),
    *((method, form) for method in ("EXPERIMENTAL_changes_in_block", "block_effects")
      for form in ("block_id height", "block_id hash", "finality final")),
    *((method, f"{kind} finality final") for method in ("EXPERIMENTAL_changes", "changes")
      for kind in ("account_changes", "all_access_key_changes", "contract_code_changes", "data_changes")),
    ("EXPERIMENTAL_changes", "single_access_key_changes of the transaction's key"),
    ("health", "params null"), ("health", "params []"),
}  # fmt: skip
# the view call forms asked without --contract: get_num of the account viewed
CALL_FORMS = {("query", "call_function finality final"), ("query", '["call/<id>/get_num", ""]'),
              ("EXPERIMENTAL_call_function", "finality final")}  # fmt: skip
BAD_REQUESTS = {
    ("(endpoint)", "unknown method"),
    ("(endpoint)", "not a JSON-RPC request"),
    ("(endpoint)", "malformed JSON"),
    ("(endpoint)", "wrong content type"),
    ("block", "bad params"),
    ("EXPERIMENTAL_view_account", "bad params: no account_id"),
    ("block", "unknown block: height above the head"),
    ("block", "unknown block: hash"),
    ("EXPERIMENTAL_protocol_config", "unknown block: height above the head"),
    ("EXPERIMENTAL_view_account", "unknown block: height above the head"),
    ("block", "unknown block: height below the head (422)"),
    ("EXPERIMENTAL_protocol_config", "unknown block: height below the head (422)"),
    ("EXPERIMENTAL_view_account", "unknown account"),
    # beyond interface 1.2.14
    ("gas_price", "bad params: []"),
    ("gas_price", "unknown block: height above the head"),
    ("query", "bad params: unknown request_type"),
    ("query", "unknown block: height above the head"),
    ("EXPERIMENTAL_view_access_key", "unknown access key"),
    ("query", "unknown account: call_function"), ("query", "unknown account: legacy call path"),
    ("EXPERIMENTAL_call_function", "unknown account"),
    ("query", "unknown account: view_state"), ("EXPERIMENTAL_view_state", "unknown account"),
    # the reads of what happened (issue 30)
    ("chunk", "unknown chunk"), ("chunk", "unknown block: height above the head"), ("chunk", "bad params: no shard_id"),
    ("chunk", "invalid shard id"),
    ("tx", "unknown transaction: wait_until NONE"), ("tx", "bad params: no sender_account_id"),
    ("EXPERIMENTAL_tx_status", "unknown transaction: wait_until NONE"),
    ("EXPERIMENTAL_receipt", "unknown receipt"), ("EXPERIMENTAL_receipt", "bad params: {}"),
    ("validators", "unknown epoch"), ("validators", "unknown block: height above the head"),
    ("EXPERIMENTAL_validators_ordered", "unknown block: height above the head"),
    ("EXPERIMENTAL_changes_in_block", "unknown block: height above the head"),
    ("EXPERIMENTAL_changes", "bad params: unknown changes_type"),
}


def conform_json(url: str, *flags: str) -> tuple[int, dict[str, Any]]:
    done = nearrpc("conform", url, "--json", *flags, timeout=120)
    assert done.stderr == "", done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, report


def rows(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(row["method"], row["check"]): row for row in report["checks"]}


def test_this_service_conforms_in_every_form_and_error(server: LiveServer) -> None:
    code, report = conform_json(server.url, *FAST, "--account", "counter.localnet", "--contract",
                                "token.localnet:ft_total_supply")
    assert code == 0, json.dumps(report, indent=1)
    viewed = [row["request"] for (method, check), row in rows(report).items()
              if method == "EXPERIMENTAL_view_account" and (method, check) in FORMS]  # fmt: skip
    assert viewed and all('"account_id":"counter.localnet"' in request for request in viewed)
    assert report["violations"] == 0 and report["passed"] and report["stopped"] == ""
    # --contract's method is what every view call form asks (issue 43: get_num of --account was),
    # held to answering a result
    contract_forms = {("query", "call_function ft_total_supply of --contract"),
                      ("query", '["call/<contract>/ft_total_supply", ""]'),
                      ("EXPERIMENTAL_call_function", "ft_total_supply of --contract"),
                      ("EXPERIMENTAL_view_state", "state of --contract")}  # fmt: skip
    assert set(rows(report)) == (FORMS - CALL_FORMS) | BAD_REQUESTS | contract_forms
    assert all(rows(report)[form]["outcome"] == "pass" for form in contract_forms)
    calls = [row["request"] for (method, check), row in rows(report).items() if "call" in method + check
             and "unknown account" not in check]  # fmt: skip
    assert len(calls) == 3 and all("token.localnet" in call and "ft_total_supply" in call for call in calls), calls
    assert not [row for row in report["checks"] if "get_num" in row["request"] and "counter.localnet" in row["request"]]
    assert report["calls"] == "view calls ask ft_total_supply of token.localnet (--contract)"
    # validators by the final block's height: VALIDATOR_INFO_UNAVAILABLE unless it ends its epoch
    may_note = (VIEW_CALL_FORMS - CALL_FORMS) | {("validators", "{block_id} final height")}
    assert {row["outcome"] for (method, check), row in rows(report).items() if (method, check) not in may_note} \
        == {"pass"}
    assert all(rows(report)[form]["outcome"] in ("pass", "note") for form in may_note)
    assert report["interface_version"] == "1.2.14"
    assert report["requests"] <= 200  # the default budget held


def test_the_report_is_a_table_on_the_terminal_side(server: LiveServer) -> None:
    done = nearrpc("conform", server.url, *FAST, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"nearrpc conform {server.url}" in done.stdout
    # the final block's author, the account checked without --account, has no contract: the two
    # view_code forms note NO_CONTRACT_CODE, EXPERIMENTAL_call_function the VM's CONTRACT_EXECUTION_ERROR
    # (query's call forms answer it as a result); its state lists empty. validators by the final
    # block's height notes VALIDATOR_INFO_UNAVAILABLE (the final block ends no epoch)
    checks = len(FORMS | BAD_REQUESTS)
    assert f"{checks} checks: {checks - 4} passed, 0 failed, 4 with notes" in done.stdout
    assert "0 violations" in done.stdout


def test_every_seeded_defect_is_reported_with_its_field_path(server: LiveServer) -> None:
    with broken_server(server.url) as url:
        code, report = conform_json(url, *FAST)
        table = nearrpc("conform", url, *FAST, timeout=120)
    assert code == 1 and not report["passed"]
    by_row = rows(report)
    for defect in DEFECTS:
        found = {(v["path"], v["kind"]) for v in by_row[defect.method, defect.check]["violations"]}
        assert (defect.path, defect.kind) in found, (defect, found)
        assert f"{defect.path}: {defect.kind}" in table.stdout, defect
    # nothing else fails: the checker blames the spoiled answers only
    assert {key for key, row in by_row.items() if row["outcome"] == "fail"} == {(d.method, d.check) for d in DEFECTS}
    assert table.returncode == 1


def test_busy_answers_are_retried(server: LiveServer) -> None:
    with broken_server(server.url, defects=False, flaky=True) as url:
        code, report = conform_json(url, *FAST)
    assert code == 0, json.dumps(report, indent=1)
    assert report["retries"] == len(FLAKY)  # a 503, a 429 and a dropped connection, each once


def test_the_request_budget_and_the_rate_hold(server: LiveServer) -> None:
    done = nearrpc("conform", server.url, "--json", "--max-requests", "12", "--rate", "10", timeout=120)
    code, report = done.returncode, json.loads(done.stdout)
    # too few requests to judge: not "1, 0 violations" but 2 (the command line must change), and why
    assert code == 2
    ran = sum(row["outcome"] != "not run" for row in report["checks"])
    assert 0 < ran < 12
    checks = len(FORMS | BAD_REQUESTS)
    assert done.stderr == (f"nearrpc conform: too few requests to check the endpoint: --max-requests 12 ran {ran} of "
                           f"{checks} checks (none found a violation); raise it, the default is 200\n")
    assert report["violations"] == 0 and not report["passed"]
    assert report["requests"] == 12
    assert "--max-requests" in report["stopped"]
    assert report["seconds"] >= 11 / 10  # 12 requests started at least 0.1 s apart
    outcomes = [row["outcome"] for row in report["checks"]]
    assert "not run" in outcomes and "fail" not in outcomes
    assert len(outcomes) == len(FORMS | BAD_REQUESTS)  # every check is listed, run or not


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_contract_without_a_method_is_refused_before_any_request() -> None:
    done = nearrpc("conform", f"http://127.0.0.1:{_closed_port()}", "--contract", "token.localnet", timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "nearrpc conform: --contract 'token.localnet': expected ACCOUNT:METHOD: no method after the colon\n"
    )


def test_an_account_that_is_no_account_id_is_refused_before_any_request() -> None:
    # the endpoint is not asked (nothing listens there): the flag is wrong, not the endpoint
    done = nearrpc("conform", f"http://127.0.0.1:{_closed_port()}", "--account", "BAD!", timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "nearrpc conform: --account 'BAD!' is not a NEAR account id: "
        "the Account ID contains an invalid character 'B' at index 0\n"
    )


def test_an_account_that_does_not_exist_is_refused_in_one_line(server: LiveServer) -> None:
    # every account check would fail for the flag's sake: the flag must change, not the endpoint
    done = nearrpc("conform", server.url, *FAST, "--account", "nobody.localnet", timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "nearrpc conform: account nobody.localnet (--account) does not exist at the final block; "
        "name an existing account\n"
    )


def test_an_endpoint_that_is_not_there_is_one_line() -> None:
    port = _closed_port()
    done = nearrpc("conform", f"http://127.0.0.1:{port}", "--retries", "0", timeout=60)
    assert done.returncode == 2
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr == f"nearrpc conform: cannot reach http://127.0.0.1:{port}: cannot connect: connection refused\n"


def test_an_endpoint_that_never_answers_times_out_in_one_line() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections complete in the kernel; nothing ever answers
        port = silent.getsockname()[1]
        done = nearrpc("conform", f"http://127.0.0.1:{port}", "--retries", "0", "--timeout", "0.5", timeout=60)
    assert done.returncode == 2
    assert done.stderr == f"nearrpc conform: cannot reach http://127.0.0.1:{port}: no answer within 0.5 s\n"


def test_https_to_a_plain_http_port_says_so_at_once(tmp_path: Path) -> None:
    """Issue 43: it said "operation not permitted" (OpenSSL's error number read as the system's)
    after retries of a handshake that fails the same way every time."""
    with plain_web_server(tmp_path) as url:
        tls = url.replace("http://", "https://", 1)
        started = time.monotonic()
        done = nearrpc("conform", tls, "--retries", "6", timeout=90)
        seconds = time.monotonic() - started
    assert (done.returncode, done.stdout) == (2, ""), done
    assert done.stderr == f"nearrpc conform: cannot reach {tls.rstrip('/')}/: the endpoint does not speak TLS (an " \
                          "http:// URL?)\n"
    assert seconds < 20  # not six retries with their backoff (25 s)


def test_a_web_server_that_is_no_near_node_is_one_line_at_once(tmp_path: Path) -> None:
    """A plain HTTP server answers 501 pages to POSTs: that took 137 s of retries and a table of
    54 failed checks; the first answer now decides, in one line (exit 2)."""
    (tmp_path / "index.html").write_text("<html>hello</html>")
    with plain_web_server(tmp_path) as url:
        started = time.monotonic()
        done = nearrpc("conform", url, "--rate", "1000", timeout=120)
        seconds = time.monotonic() - started
    assert (done.returncode, done.stdout) == (2, ""), done
    assert done.stderr.startswith(f"nearrpc conform: {url} is not a NEAR JSON-RPC endpoint: genesis_config (params "
                                  "omitted) was answered with HTTP 501, text/html")
    assert done.stderr.count("\n") == 1
    assert seconds < 30  # three retries of the 501 with their backoff, and nothing more


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/docs", "the URL's path /docs is not a JSON-RPC endpoint: /docs is the documentation page; conform the "
                  "endpoint at {root}"),
        ("/health", "the URL's path /health is not a JSON-RPC endpoint: POST /health answers the method health alone; "
                    "conform the endpoint at {root}"),
        ("/status", "the URL's path /status is not a JSON-RPC endpoint: POST /status answers the method status alone"),
        ("/near/block", "the URL's path /…/block is not a JSON-RPC endpoint: POST /…/block answers the method block "
                        "alone; conform the URL without /block"),
        ("/nothing", "{root}… is not a NEAR JSON-RPC endpoint: genesis_config (params omitted) was answered with HTTP "
                     "404, no Content-Type, empty body; it is the URL's path that answers so"),
    ],
)
def test_a_path_that_is_no_json_rpc_endpoint_is_one_line(server: LiveServer, path: str, says: str) -> None:
    """Issue 43: /docs was refused as the whole URL with the path masked ("/…"), the very part
    that was wrong; /health ran the whole table of failures (its POST answers one method)."""
    root = server.url.rstrip("/") + "/"
    done = nearrpc("conform", server.url.rstrip("/") + path, *FAST, "--retries", "0", timeout=60)
    assert (done.returncode, done.stdout) == (2, ""), done
    assert done.stderr.startswith("nearrpc conform: " + says.format(root=root)), done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "environment", "message"),
    [
        (("ftp://example.org",), {}, "nearrpc conform: 'ftp://example.org': expected an http:// or https:// URL"),
        (("localhost:3030",), {}, "nearrpc conform: 'localhost:3030': expected an http:// or https:// URL"),
        (("http://127.0.0.1:9", "--rate", "0"), {}, "nearrpc conform: --rate='0': must be above 0"),
        (("http://127.0.0.1:9",), {"NEARRPC_CONFORM_MAX_REQUESTS": "0"},
         "nearrpc conform: NEARRPC_CONFORM_MAX_REQUESTS='0': must be 1 or more"),
    ],
)
def test_bad_input_is_refused_in_one_line(args: tuple[str, ...], environment: dict[str, str], message: str) -> None:
    done = nearrpc("conform", *args, env=environment, timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == message + "\n"


@pytest.mark.reference
def test_real_nearcore_answers_conform(reference: Path) -> None:
    """The captured testnet block and genesis config (with members the interface no longer
    lists) pass every check that reaches them: no false alarms on real node output."""
    with captured_node(reference / "captured") as url:
        _, report = conform_json(url, *FAST)
    by_row = rows(report)
    real = {key: row for key, row in by_row.items() if key in FORMS and key[0] in ("genesis_config", "block")}
    assert len(real) == 4 + 9
    for key, row in real.items():
        assert row["violations"] == [], (key, row)
    # the stub holds no genesis block, and says so the way nearcore does
    assert real["block", "sync_checkpoint genesis"]["outcome"] == "note"
    assert {row["outcome"] for key, row in real.items() if key != ("block", "sync_checkpoint genesis")} == {"pass"}
    # methods the stub does not serve are reported, not skipped
    assert by_row["client_config", "params {}"]["outcome"] == "fail"


def test_the_help_names_every_knob() -> None:
    done = nearrpc("conform", "--help")
    text = " ".join(done.stdout.split())
    for knob in ("--account", "--json", "--max-requests", "--rate", "--timeout", "--retries",
                 "NEARRPC_CONFORM_RATE", "default 200"):
        assert knob in text, knob


def test_no_credential_of_the_url_is_shown(server: LiveServer) -> None:
    """A provider's URL carries its key in the user, path or query: the report's title, its JSON
    and a refusal show the scheme, host and port only."""
    secret_url = server.url.replace("http://", "http://someone:PASSWORD-1@") + "/?apikey=SECRET-2"
    for flags in ((), ("--json",)):
        done = nearrpc("conform", secret_url, *FAST, "--max-requests", "30", *flags, timeout=120)
        title = json.loads(done.stdout)["url"] if flags else done.stdout
        assert f"{server.url}/…" in title, done.stdout[:500]
        for shown in (done.stdout, done.stderr):
            assert "PASSWORD-1" not in shown and "SECRET-2" not in shown and "someone" not in shown
    gone = f"http://someone:PASSWORD-1@127.0.0.1:{_closed_port()}/?apikey=SECRET-2"
    done = nearrpc("conform", gone, "--retries", "0", timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("nearrpc conform: cannot reach http://127.0.0.1:")
    assert "PASSWORD-1" not in done.stderr and "SECRET-2" not in done.stderr, done.stderr
