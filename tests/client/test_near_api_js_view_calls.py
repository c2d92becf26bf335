"""near-api-js, the published NEAR JavaScript client, calling the sample chain's contracts through
its own provider (view_calls.mjs: callFunction, 7.x's viewFunction, and callFunctionRaw) against
the plugin's `nearrpc_server`, in one node process: the values the contracts' state holds at
each height, and the library's own errors for a missing account, a missing method and a panic
(its parseRpcError / parseRpcErrorMessage, as it reads nearcore's answers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nearrpc.testing.server import NearrpcServer
from tests.client.chain import hash_at
from tests.client.contract_views import BAD_ARGS_PANIC, FT_METADATA, MISSING_METHOD, PANIC_MESSAGE, contract_views
from tests.client.node_scripts import run_script

pytestmark = pytest.mark.live
SCRIPT = Path(__file__).resolve().parent / "view_calls.mjs"


def _call(
    name: str, contract: str, method: str, args: dict[str, Any], height: int, raw: bool = False
) -> dict[str, Any]:
    return {"name": name, "contractId": contract, "method": method, "args": args, "blockId": height, "raw": raw}


V = contract_views()


@pytest.fixture(scope="module")
def answers(
    near_api_js: Path, nearrpc_server: NearrpcServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """Every call's answer, from one node process."""
    final = V.final_height
    plan = [_call(f"count@{h}", V.counter, "get_num", {}, h) for h, _ in V.counts]
    plan += [_call(f"balance@{h}", V.token, "ft_balance_of", {"account_id": V.holder}, h) for h, _ in V.balances]
    plan += [
        _call("total_supply", V.token, "ft_total_supply", {}, final),
        _call("metadata", V.token, "ft_metadata", {}, final),
        _call("raw_count", V.counter, "get_num", {}, V.counts[-1][0], raw=True),
        _call("missing_account", V.missing_account, "get_num", {}, final),
        _call("missing_method", V.counter, MISSING_METHOD, {}, final),
        _call("panic", V.token, "ft_balance_of", {}, final),
    ]
    return run_script(SCRIPT, near_api_js, tmp_path_factory.mktemp("near-api-js"), nearrpc_server.url, json.dumps(plan))


def test_call_function_reads_the_stored_state(answers: dict[str, Any]) -> None:
    for height, count in V.counts:
        assert answers[f"count@{height}"] == {"returned": count}
    for height, balance in V.balances:
        assert answers[f"balance@{height}"] == {"returned": str(balance)}
    assert answers["total_supply"] == {"returned": str(V.total_supply)}
    assert answers["metadata"] == {"returned": FT_METADATA}
    height, count = V.counts[-1]
    raw = answers["raw_count"]["returned"]
    assert raw == {
        "result": list(str(count).encode()),
        "logs": [],
        "block_height": height,
        "block_hash": hash_at(height),
    }


def test_missing_account_is_the_librarys_typed_error(answers: dict[str, Any]) -> None:
    # UNKNOWN_ACCOUNT, a handler error: the typed error with the block the node named
    final = V.final_height
    gone = answers["missing_account"]
    assert gone["class"] == "AccountDoesNotExistError", gone
    assert (gone["accountId"], gone["blockHeight"], gone["blockHash"]) == (V.missing_account, final, hash_at(final))


def test_failed_calls_are_the_librarys_errors(answers: dict[str, Any]) -> None:
    # a `query` result with an `error` member: the library reads nearcore's message
    final = V.final_height
    missing = answers["missing_method"]
    assert missing["class"] == "ContractMethodNotFoundError", missing
    assert (missing["blockHeight"], missing["blockHash"]) == (final, hash_at(final))
    # a panic has no typed error of its own there: RpcError with nearcore's message, whole
    panic = answers["panic"]
    assert (panic["class"], panic["message"]) == ("RpcError", PANIC_MESSAGE), panic
    assert BAD_ARGS_PANIC in panic["message"]
