"""The error catalogue: every cause has a constructor, renders in nearcore's shape, matches the
spec, and carries the HTTP status nearcore answers with (the 422 rule included)."""

from __future__ import annotations

import re

import orjson
import pytest

from nearrpc.generated.methods import METHODS
from nearrpc.http import wire
from nearrpc.methods import errors
from nearrpc.methods.blocks import BlockReference
from nearrpc.methods.errors import CATALOGUE, METHOD_CAUSES, Cause, RpcError
from nearrpc.spec import validate_component
from tests.conftest import REPO

HASH = "4reLvkAWfqk5fsqio1KLudk46cqRz9erQdaHkWZKMJDZ"
HEIGHT_5 = BlockReference("block_id", 5)

# One realistic instance of every cause, built by its constructor.
EXAMPLES: dict[Cause, RpcError] = {
    Cause.PARSE_ERROR: errors.parse_error("Failed parsing args: missing field `account_id`"),
    Cause.METHOD_NOT_FOUND: errors.method_not_found("no_such_method"),
    Cause.UNKNOWN_BLOCK: errors.unknown_block("block", HEIGHT_5, "BLOCK HEIGHT: 5", 100),
    Cause.NOT_SYNCED_YET: errors.not_synced_yet(),
    Cause.UNKNOWN_ACCOUNT: errors.unknown_account("x.near", 5, HASH),
    Cause.UNKNOWN_ACCESS_KEY: errors.unknown_access_key("ed25519:" + HASH, 5, HASH),
    Cause.NO_CONTRACT_CODE: errors.no_contract_code("x.near", 5, HASH),
    Cause.UNAVAILABLE_SHARD: errors.unavailable_shard(3),
    Cause.CONTRACT_EXECUTION_ERROR: errors.contract_execution_error(
        {"MethodResolveError": "MethodNotFound"}, "MethodResolveError(MethodNotFound)", 5, HASH
    ),
    Cause.TOO_LARGE_CONTRACT_STATE: errors.too_large_contract_state("x.near", 5, HASH),
    Cause.NO_SYNCED_BLOCKS: errors.no_synced_blocks(),
    Cause.UNKNOWN_CHUNK: errors.unknown_chunk(HASH),
    Cause.INVALID_SHARD_ID: errors.invalid_shard_id(7),
    Cause.UNKNOWN_TRANSACTION: errors.unknown_transaction(HASH),
    Cause.TIMEOUT_ERROR: errors.timeout_error(),
    Cause.UNKNOWN_RECEIPT: errors.unknown_receipt(HASH),
    Cause.UNKNOWN_EPOCH: errors.unknown_epoch(),
    Cause.VALIDATOR_INFO_UNAVAILABLE: errors.validator_info_unavailable(),
    Cause.INVALID_TRANSACTION: errors.invalid_transaction({"InvalidNonce": {"tx_nonce": 5, "ak_nonce": 7}}),
    Cause.DOES_NOT_TRACK_SHARD: errors.read_only_send(),
    Cause.UNKNOWN_SNAPSHOT: errors.unknown_snapshot("snapshot-3"),
    Cause.INTERNAL_ERROR: errors.internal_error("disk on fire"),
}

EXPECTED = {  # (top-level name, code, message, HTTP status for params without a block_id)
    Cause.PARSE_ERROR: ("REQUEST_VALIDATION_ERROR", -32700, "Parse error", 400),
    Cause.METHOD_NOT_FOUND: ("REQUEST_VALIDATION_ERROR", -32601, "Method not found", 400),
    Cause.UNKNOWN_BLOCK: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.NOT_SYNCED_YET: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.UNKNOWN_ACCOUNT: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.UNKNOWN_ACCESS_KEY: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.NO_CONTRACT_CODE: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.UNAVAILABLE_SHARD: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.CONTRACT_EXECUTION_ERROR: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.TOO_LARGE_CONTRACT_STATE: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.NO_SYNCED_BLOCKS: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.UNKNOWN_CHUNK: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.INVALID_SHARD_ID: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.UNKNOWN_TRANSACTION: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.TIMEOUT_ERROR: ("HANDLER_ERROR", -32000, "Server error", 408),
    Cause.UNKNOWN_RECEIPT: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.UNKNOWN_EPOCH: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.VALIDATOR_INFO_UNAVAILABLE: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.INVALID_TRANSACTION: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.DOES_NOT_TRACK_SHARD: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.UNKNOWN_SNAPSHOT: ("HANDLER_ERROR", -32000, "Server error", 200),
    Cause.INTERNAL_ERROR: ("INTERNAL_ERROR", -32000, "Server error", 500),
}
# Unit variants: no `info` member at all.
UNIT_CAUSES = frozenset({
    Cause.NOT_SYNCED_YET, Cause.NO_SYNCED_BLOCKS, Cause.TIMEOUT_ERROR, Cause.UNKNOWN_EPOCH,
    Cause.VALIDATOR_INFO_UNAVAILABLE, Cause.DOES_NOT_TRACK_SHARD,
})  # fmt: skip


def test_every_cause_has_an_example_and_an_expectation() -> None:
    assert set(CATALOGUE) == set(EXAMPLES) == set(EXPECTED) == set(Cause)


@pytest.mark.parametrize("cause", sorted(CATALOGUE))
def test_entry_renders_in_nearcores_shape(cause: Cause) -> None:
    error = EXAMPLES[cause]
    body = orjson.loads(wire.error_body(b'"req-1"', error))
    assert list(body) == ["jsonrpc", "error", "id"] and body["id"] == "req-1"
    rendered = body["error"]
    assert list(rendered) == ["name", "cause", "code", "message", "data"]
    name, code, message, status = EXPECTED[cause]
    assert (rendered["name"], rendered["code"], rendered["message"], error.http_status({})) == (
        name,
        code,
        message,
        status,
    )
    assert rendered["cause"]["name"] == cause
    assert rendered["data"] == error.data
    if cause in UNIT_CAUSES:
        assert "info" not in rendered["cause"]  # a unit variant
    else:
        assert rendered["cause"]["info"] == error.info


def test_internal_error_reads_as_nearcores_method_errors() -> None:
    error = errors.internal_error("disk on fire")
    assert error.info == {"error_message": "disk on fire"}
    assert error.data == "The node reached its limits. Try again later. More details: disk on fire"


@pytest.mark.parametrize(
    ("method", "expected_info", "expected_data"),
    [
        ("block", {}, "DB Not Found Error: BLOCK HEIGHT: 5 \n Cause: Unknown"),
        ("EXPERIMENTAL_protocol_config", {}, "Block Not Found: BLOCK HEIGHT: 5"),
        (
            "EXPERIMENTAL_view_account",
            {"block_reference": {"block_id": 5}},
            "Block either has never been observed on the node or has been garbage collected: BlockId(Height(5))",
        ),
        # beyond interface 1.2.14: the other views as view_account, query with the legacy text
        # of process_query_response, gas_price as block
        (
            "EXPERIMENTAL_view_access_key_list",
            {"block_reference": {"block_id": 5}},
            "Block either has never been observed on the node or has been garbage collected: BlockId(Height(5))",
        ),
        ("query", {"block_reference": {"block_id": 5}}, "DB Not Found Error: BLOCK HEIGHT: 5 \n Cause: Unknown"),
        ("gas_price", {}, "DB Not Found Error: BLOCK HEIGHT: 5 \n Cause: Unknown"),
    ],
)
def test_unknown_block_texts_are_each_methods_own(method: str, expected_info: object, expected_data: str) -> None:
    error = errors.unknown_block(method, HEIGHT_5, "BLOCK HEIGHT: 5", 100)
    assert (error.info, error.data) == (expected_info, expected_data)


@pytest.mark.parametrize(
    ("method", "reference", "expected_data"),
    [
        ("query", BlockReference("block_id", HASH), f"DB Not Found Error: BLOCK HEADER: {HASH}"),
        (
            "query",
            BlockReference("finality", "final"),
            "Block either has never been observed on the node or has been garbage collected: Finality(Final)",
        ),
        ("gas_price", BlockReference("block_id", HASH), f"DB Not Found Error: BLOCK HEADER: {HASH} \n Cause: Unknown"),
    ],
)
def test_unknown_block_by_hash_or_finality(method: str, reference: BlockReference, expected_data: str) -> None:
    assert errors.unknown_block(method, reference, f"BLOCK: {HASH}", 100).data == expected_data


@pytest.mark.parametrize(
    ("params", "head", "status"),
    [
        ({"block_id": 5}, 100, 422),  # a height below the head
        ({"block_id": 100}, 100, 200),  # at the head
        ({"block_id": 150}, 100, 200),  # above it
        ({"block_id": HASH}, 100, 200),  # a hash
        ({"finality": "final", "block_id": 5}, 100, 422),  # nearcore reads block_id whatever won
        ({"sync_checkpoint": "genesis"}, 100, 200),
        ([5], 100, 200),  # the positional form
        ({"block_id": True}, 100, 200),  # a boolean is no height
        ({"block_id": 5.0}, 100, 422),  # JSON Schema's integer 5 (nearcore refuses the float)
        ({"block_id": 100.0}, 100, 200),
        ({"block_id": 5}, None, 200),  # no head at all
    ],
)
def test_unknown_block_status_follows_nearcores_rule(params: object, head: int | None, status: int) -> None:
    assert errors.unknown_block("block", HEIGHT_5, "BLOCK HEIGHT: 5", head).http_status(params) == status


def test_only_unknown_block_has_the_422_rule() -> None:
    for cause, error in EXAMPLES.items():
        if cause is not Cause.UNKNOWN_BLOCK:
            assert error.http_status({"block_id": 1}) == EXPECTED[cause][3]


@pytest.mark.parametrize(
    ("method", "cause"),
    [(m, c) for m in METHODS for c in (Cause.PARSE_ERROR, Cause.METHOD_NOT_FOUND, *METHOD_CAUSES[m])],
)
def test_each_methods_errors_match_its_response_schema(method: str, cause: Cause) -> None:
    error = EXAMPLES[cause]
    if cause is Cause.UNKNOWN_BLOCK:
        error = errors.unknown_block(method, HEIGHT_5, "BLOCK HEIGHT: 5", 100)
    body = orjson.loads(wire.error_body(b"7", error))
    validate_component(METHODS[method].response_schema, body)
    validate_component("JsonRpcResponse", body)


def _readme_cause_table() -> dict[str, set[str]]:
    """The README's method table: method -> the cause names its last column lists."""
    table: dict[str, set[str]] = {}
    header: list[str] = []  # of the table the line is in (other tables have backticked rows too)
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if not line.startswith("|"):
            header = []
        elif not header:
            header = cells
        if header == ["method", "params forms", "errors (cause names)"] and cells[0].startswith("`"):
            method = re.match(r"`([A-Za-z_.]+)`", cells[0])
            if method:
                table[method.group(1)] = set(re.findall(r"`([A-Z_]+)`", cells[2]))
    return table


def test_readme_cause_table_is_the_catalogue() -> None:
    assert _readme_cause_table() == {method: {str(c) for c in causes} for method, causes in METHOD_CAUSES.items()}


def test_the_texts_of_issue_30s_causes_are_nearcores() -> None:
    """jsonrpc-primitives types/chunks.rs, transactions.rs, receipts.rs, validator.rs: the
    `data` each From<...> for RpcError writes (the receipt's is the cause itself, an object)."""
    assert EXAMPLES[Cause.UNKNOWN_CHUNK].data == (
        f"Chunk Missing (unavailable on the node): ChunkHash(`{HASH}`) \n Cause: Unknown"
    )
    assert EXAMPLES[Cause.UNKNOWN_CHUNK].info == {"chunk_hash": HASH}
    assert EXAMPLES[Cause.INVALID_SHARD_ID].data == "Shard id 7 does not exist"
    assert EXAMPLES[Cause.UNKNOWN_TRANSACTION].data == f"Transaction {HASH} doesn't exist"
    assert EXAMPLES[Cause.UNKNOWN_TRANSACTION].info == {"requested_transaction_hash": HASH}
    assert EXAMPLES[Cause.TIMEOUT_ERROR].data == "Timeout"
    assert EXAMPLES[Cause.UNKNOWN_RECEIPT].data == {"name": "UNKNOWN_RECEIPT", "info": {"receipt_id": HASH}}
    assert EXAMPLES[Cause.UNKNOWN_EPOCH].data == "Unknown Epoch"
    assert EXAMPLES[Cause.VALIDATOR_INFO_UNAVAILABLE].data == "Validator info unavailable"


def test_the_texts_of_issue_45s_causes() -> None:
    """jsonrpc-primitives types/transactions.rs: INVALID_TRANSACTION's info is empty (its context
    is skip_serializing) and its data the ServerError::TxExecutionError around the InvalidTxError;
    DOES_NOT_TRACK_SHARD's Display text, with this server's hint."""
    refused = EXAMPLES[Cause.INVALID_TRANSACTION]
    assert (refused.info, refused.data) == (
        {}, {"TxExecutionError": {"InvalidTxError": {"InvalidNonce": {"tx_nonce": 5, "ak_nonce": 7}}}},
    )  # fmt: skip
    assert str(EXAMPLES[Cause.DOES_NOT_TRACK_SHARD].data).startswith(
        "Node doesn't track this shard. Cannot determine whether the transaction is valid (this server is read-only"
    )
    assert EXAMPLES[Cause.UNKNOWN_SNAPSHOT].info == {"snapshot_id": "snapshot-3"}
