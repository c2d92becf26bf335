"""A fork's upstream error answer to a view call, as the handlers raise it (cli/fork_calls.py):
the catalogue's RpcError of the cause the upstream named, with its info and data as sent; a
cause the catalogue does not know is INTERNAL_ERROR naming it."""

from __future__ import annotations

from nearrpc.cli.fork_calls import upstream_error
from nearrpc.methods.errors import Cause


def test_a_known_cause_is_the_catalogues_error_with_the_upstreams_info_and_data() -> None:
    info = {"requested_account_id": "nobody.localnet", "block_height": 30, "block_hash": "abc"}
    data = "account nobody.localnet does not exist"
    error = upstream_error({"name": "HANDLER_ERROR", "cause": {"name": "UNKNOWN_ACCOUNT", "info": info},
                            "code": -32000, "message": "Server error", "data": data})  # fmt: skip
    assert (error.kind.cause, error.info, error.data) == (Cause.UNKNOWN_ACCOUNT, info, data)


def test_an_unknown_cause_is_an_internal_error_naming_it() -> None:
    error = upstream_error({"name": "HANDLER_ERROR", "cause": {"name": "SOMETHING_NEW", "info": {}},
                            "data": {"detail": 1}})  # fmt: skip
    assert error.kind.cause is Cause.INTERNAL_ERROR
    assert 'SOMETHING_NEW: {"detail":1}' in error.data
