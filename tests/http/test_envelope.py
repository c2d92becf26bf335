from __future__ import annotations

import pytest

from nearrpc.http.envelope import read_request
from nearrpc.methods.errors import RpcError


@pytest.mark.parametrize("request_id", ["x", 1, 1.5, None, {"a": [1]}, [1, 2], True, 2**70])
def test_any_id_is_kept(request_id: object) -> None:
    rpc = read_request({"jsonrpc": "2.0", "id": request_id, "method": "block", "params": [1]})
    assert rpc.request_id == request_id and rpc.method == "block" and rpc.params == [1]


def test_params_default_to_null() -> None:
    assert read_request({"jsonrpc": "2.0", "id": 1, "method": "genesis_config"}).params is None


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "block", "params": {}},  # no id: a notification
        {"jsonrpc": "1.0", "id": 1, "method": "block"},
        {"id": 1, "method": "block"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1, "method": None},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "method": "block", "extra": 1},
        [{"jsonrpc": "2.0", "id": 1, "method": "block"}],  # batches are not served
        [],
        "block",
        3,
        None,
    ],
)
def test_anything_else_is_one_parse_error(message: object) -> None:
    with pytest.raises(RpcError) as caught:
        read_request(message)
    assert caught.value.kind.cause == "PARSE_ERROR"
    assert caught.value.data == "JSON RPC Request format was expected"
