"""Contract view calls through three published Python clients, as their users write them, against
the suite's server over the sample store (each backend): near-jsonrpc-client's `query`
call_function (and EXPERIMENTAL_call_function), py-near's `Account.view_function` and near-kit's
`Near.view()`. Each reads the values the contracts' state holds at each height, and raises its
own error, as its source expects it from nearcore, for a missing account, a missing method and a
panic."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import near_jsonrpc_models as m
import orjson
import pytest
from near import Near
from near.errors import AccountNotFoundError, ContractPanicError
from near_jsonrpc_client import NearClientSync, RpcClientError, RpcError
from py_near.account import Account, ViewFunctionError
from py_near.exceptions.provider import UnknownAccount

from tests.client.chain import hash_at
from tests.client.contract_views import (
    BAD_ARGS_PANIC,
    FT_METADATA,
    METHOD_NOT_FOUND_MESSAGE,
    MISSING_METHOD,
    PANIC_MESSAGE,
    contract_views,
)
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.live
V = contract_views()


# -- near-jsonrpc-client: `query` with request_type call_function, and EXPERIMENTAL_call_function


def _args(args: dict[str, Any]) -> m.FunctionArgs:
    return m.FunctionArgs(base64.b64encode(orjson.dumps(args)).decode())


def _query(near: NearClientSync, account: str, method: str, args: dict[str, Any], height: int) -> Any:
    request = m.RpcQueryRequestCallFunctionByBlockId(
        block_id=m.BlockId(m.BlockIdBlockHeight(height)), request_type="call_function",
        account_id=m.AccountId(account), method_name=method, args_base64=_args(args),
    )  # fmt: skip
    return near.query(params=m.RpcQueryRequest(request)).root


def _cause(error: RpcError) -> Any:
    """The error's `cause` variant: for query and EXPERIMENTAL_call_function the client's
    RpcError holds the whole response model, the error one level down."""
    return error.error.error.root.cause.root


def _read(result: Any, height: int) -> Any:
    """The call's JSON value, after checking the block it was read at."""
    assert (result.block_height, result.block_hash.root, result.logs) == (height, hash_at(height), [])
    return orjson.loads(bytes(result.result))


def test_near_jsonrpc_client_query_reads_the_stored_state(near: NearClientSync) -> None:
    for height, count in V.counts:
        assert _read(_query(near, V.counter, "get_num", {}, height), height) == count
    for height, balance in V.balances:
        assert _read(_query(near, V.token, "ft_balance_of", {"account_id": V.holder}, height), height) == str(balance)
    final = V.final_height
    assert _read(_query(near, V.token, "ft_total_supply", {}, final), final) == str(V.total_supply)
    assert _read(_query(near, V.token, "ft_metadata", {}, final), final) == FT_METADATA


def test_near_jsonrpc_client_query_missing_account(near: NearClientSync) -> None:
    final = V.final_height
    with pytest.raises(RpcError) as gone:
        _query(near, V.missing_account, "get_num", {}, final)
    cause = _cause(gone.value)
    assert (cause.name, cause.info.requested_account_id.root) == ("UNKNOWN_ACCOUNT", V.missing_account)
    assert (cause.info.block_height, cause.info.block_hash.root) == (final, hash_at(final))


def test_near_jsonrpc_client_query_failed_calls(near: NearClientSync) -> None:
    final = V.final_height
    # a failed call is a `query` result with an `error` member, which the client's response
    # model does not know: it raises its base error with that message
    with pytest.raises(RpcClientError) as missing:
        _query(near, V.counter, MISSING_METHOD, {}, final)
    assert type(missing.value) is RpcClientError and str(missing.value) == METHOD_NOT_FOUND_MESSAGE
    with pytest.raises(RpcClientError) as panic:
        _query(near, V.token, "ft_balance_of", {}, final)
    assert type(panic.value) is RpcClientError and str(panic.value) == PANIC_MESSAGE


def _experimental(near: NearClientSync, account: str, method: str, args: dict[str, Any], height: int) -> Any:
    request = m.RpcCallFunctionRequestBlockId(
        block_id=m.BlockId(m.BlockIdBlockHeight(height)), account_id=m.AccountId(account), method_name=method,
        args_base64=_args(args),
    )  # fmt: skip
    return near.experimental_call_function(params=m.RpcCallFunctionRequest(request))


def test_near_jsonrpc_client_experimental_call_function(near: NearClientSync) -> None:
    for height, count in V.counts:
        answer = _experimental(near, V.counter, "get_num", {}, height)
        assert orjson.loads(bytes(answer.result)) == count
    final = V.final_height
    with pytest.raises(RpcError) as missing:
        _experimental(near, V.counter, MISSING_METHOD, {}, final)
    cause = _cause(missing.value)
    assert cause.name == "CONTRACT_EXECUTION_ERROR"
    assert cause.info.vm_error.model_dump(mode="json") == {"MethodResolveError": "MethodNotFound"}
    with pytest.raises(RpcError) as panic:
        _experimental(near, V.token, "ft_balance_of", {}, final)
    vm_error = _cause(panic.value).info.vm_error.model_dump(mode="json")
    # the structured error is near-primitives' FunctionCallError: a host error is its Display text
    assert vm_error == {"ExecutionError": f"Smart contract panicked: {BAD_ARGS_PANIC}"}


# -- py-near: Account.view_function (asyncio, aiohttp)


def _py_near(server: LiveServer, *calls: tuple[str, str, dict[str, Any], int]) -> list[Any]:
    """Each call's ViewFunctionResult, or the exception view_function raised."""

    async def run() -> list[Any]:
        account = Account(rpc_addr=server.url)  # read-only: no account id, no key
        answers: list[Any] = []
        try:
            for contract, method, args, height in calls:
                try:
                    answers.append(await account.view_function(contract, method, args, block_id=height))
                except Exception as error:  # the SDK's own error is the answer
                    answers.append(error)
        finally:
            await account.shutdown()
        return answers

    return asyncio.run(run())


def test_py_near_view_function_reads_the_stored_state(server: LiveServer) -> None:
    calls: list[tuple[str, str, dict[str, Any], int]] = [(V.counter, "get_num", {}, h) for h, _ in V.counts]
    calls += [(V.token, "ft_balance_of", {"account_id": V.holder}, height) for height, _ in V.balances]
    calls += [(V.token, "ft_total_supply", {}, V.final_height), (V.token, "ft_metadata", {}, V.final_height)]
    answers = _py_near(server, *calls)
    expected = [*(c for _, c in V.counts), *(str(b) for _, b in V.balances), str(V.total_supply), FT_METADATA]
    assert [answer.result for answer in answers] == expected
    heights = [height for *_, height in calls]
    assert [(a.block_height, a.block_hash) for a in answers] == [(h, hash_at(h)) for h in heights]


def test_py_near_view_function_missing_account(server: LiveServer) -> None:
    (gone,) = _py_near(server, (V.missing_account, "get_num", {}, V.final_height))
    # the provider maps the error's cause to its class, and keeps the error as the node sent it
    assert type(gone) is UnknownAccount, gone
    assert gone.error_json["cause"]["name"] == "UNKNOWN_ACCOUNT"
    assert gone.error_json["cause"]["info"]["requested_account_id"] == V.missing_account
    assert gone.args == (f"account {V.missing_account} does not exist while viewing",)


def test_py_near_view_function_failed_calls(server: LiveServer) -> None:
    final = V.final_height
    missing, panic = _py_near(server, (V.counter, MISSING_METHOD, {}, final), (V.token, "ft_balance_of", {}, final))
    # a result with an `error` member: view_function raises ViewFunctionError with that message
    assert type(missing) is ViewFunctionError and missing.args == (METHOD_NOT_FOUND_MESSAGE,), missing
    assert type(panic) is ViewFunctionError and panic.args == (PANIC_MESSAGE,), panic


# -- near-kit: Near.view() (httpx)


@pytest.fixture(scope="module")
def near_kit(server: LiveServer) -> Iterator[Near]:
    client = Near("localnet", rpc_url=server.url, retries=0)  # no retry: a failure shows at once
    try:
        yield client
    finally:
        client.close()


def test_near_kit_view_reads_the_stored_state(near_kit: Near) -> None:
    for height, count in V.counts:
        assert near_kit.view(V.counter, "get_num", block=height) == count
    for height, balance in V.balances:
        assert near_kit.view(V.token, "ft_balance_of", {"account_id": V.holder}, block=height) == str(balance)
        assert near_kit.view(V.token, "ft_balance_of", {"account_id": V.holder}, block=hash_at(height)) == str(balance)
    assert near_kit.view(V.token, "ft_total_supply", block=V.final_height) == str(V.total_supply)
    assert near_kit.view(V.token, "ft_metadata", block="final") == FT_METADATA


def test_near_kit_view_missing_account(near_kit: Near) -> None:
    final = V.final_height
    with pytest.raises(AccountNotFoundError) as gone:
        near_kit.view(V.missing_account, "get_num", block=final)
    assert gone.value.account_id == V.missing_account
    assert str(gone.value) == f"Account not found: {V.missing_account}"


def test_near_kit_view_failed_calls(near_kit: Near) -> None:
    final = V.final_height
    with pytest.raises(ContractPanicError) as missing:
        near_kit.view(V.counter, MISSING_METHOD, block=final)
    assert missing.value.panic == f"{V.counter}.{MISSING_METHOD}: {METHOD_NOT_FOUND_MESSAGE}"
    assert missing.value.logs == []
    with pytest.raises(ContractPanicError) as panic:
        near_kit.view(V.token, "ft_balance_of", {}, block=final)
    assert panic.value.panic == f"{V.token}.ft_balance_of: {PANIC_MESSAGE}"
