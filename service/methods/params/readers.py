"""The small readers every family of params builds on, with serde's words for their refusals.

nearcore reads a request's params with serde (chain/jsonrpc-primitives/src/types/): a block
reference (BlockReference, flattened beside a request's own members: the first of its members
in the request wins), block ids, hashes, account ids and public keys. Each reader here takes
JSON values and returns them as the generated model validates them, or raises the PARSE_ERROR
nearcore would ("Failed parsing args: ..."). A height spelled as an integral float (5.0) is that
height, as JSON Schema reads it; nearcore refuses it (spec/DEVIATIONS.md). This module imports
nothing of its siblings: they all build on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from nearrpc.generated.methods import MethodSpec
from nearrpc.methods.blocks import height_of
from nearrpc.methods.errors import RpcError, parse_error
from nearrpc.nearcore.account_id import account_id_refusal
from nearrpc.nearcore.base58 import HASH_CHARS, Base58Error, decode_onto
from nearrpc.nearcore.echo import shown
from nearrpc.nearcore.public_key import PublicKeyError, canonical_public_key

# A method's params reader: its params as the generated model takes them (or a refusal).
Reader = Callable[[MethodSpec, object], object]

FINALITIES: Final = ("optimistic", "near-final", "final")
# TxExecutionStatus, from the least to the most a request can wait for (`wait_until`)
TX_EXECUTION_STATUSES: Final = ("NONE", "INCLUDED", "EXECUTED_OPTIMISTIC", "INCLUDED_FINAL", "EXECUTED", "FINAL")
SYNC_CHECKPOINTS: Final = ("genesis", "earliest_available")


def failed(detail: str) -> RpcError:
    return parse_error(f"Failed parsing args: {detail}")


def json_kind(value: object) -> str:
    """How serde names an unexpected JSON value in its messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f'string "{shown(value)}"'
    if isinstance(value, list):
        return "sequence"
    return "map"


def expect_object(params: object, struct: str) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise failed(f"invalid type: {json_kind(params)}, expected struct {struct}")
    return params


def check_variant(value: object, allowed: tuple[str, ...]) -> None:
    """A unit variant of a serde enum, named by a string."""
    if not isinstance(value, str):
        raise failed(f"invalid type: {json_kind(value)}, expected variant identifier")
    if value not in allowed:
        expected = ", ".join(f"`{v}`" for v in allowed)
        raise failed(f"unknown variant `{shown(value)}`, expected one of {expected}")


def is_block_hash(text: str) -> bool:
    """A 32-byte base58 hash, decoded onto 32 bytes as nearcore does (so a long text costs
    no more than a short one); a text longer than a hash's 44 characters is refused unread."""
    if len(text) > HASH_CHARS:
        return False
    try:
        return len(decode_onto(text, 32)) == 32
    except Base58Error:
        return False


def checked_hash(value: object) -> str:
    """A CryptoHash (a chunk, transaction, receipt or epoch id)."""
    if not isinstance(value, str):
        raise failed(f"invalid type: {json_kind(value)}, expected a string")
    if not is_block_hash(value):
        raise failed(f'invalid value: string "{shown(value)}", expected a base58 hash of 32 bytes')
    return value


def checked_block_id(value: object) -> int | str:
    """A height (integral floats read as the integer they equal) or a 32-byte base58 hash."""
    height = height_of(value)
    if height is not None:
        return height
    if isinstance(value, str) and is_block_hash(value):
        return value
    raise failed("data did not match any variant of untagged enum BlockId")


def maybe_block_id(value: object) -> int | str | None:
    """A MaybeBlockId: null (the head, or the latest epoch) or a block id."""
    return None if value is None else checked_block_id(value)


def block_reference(params: dict[str, Any]) -> dict[str, Any]:
    """The winning reference member alone, e.g. {"finality": "final"}."""
    for key, value in params.items():
        if key == "block_id":
            value = checked_block_id(value)
        elif key == "finality":
            check_variant(value, FINALITIES)
        elif key == "sync_checkpoint":
            check_variant(value, SYNC_CHECKPOINTS)
        else:
            continue
        return {key: value}
    raise failed("no variant of enum BlockReference found in flattened data")


def reference_alone(method: MethodSpec, params: object) -> object:
    """The params of a method that takes an object holding a block reference and nothing else."""
    return block_reference(expect_object(params, method.params_schema))


def checked_account_id(value: object) -> str:
    """An AccountId as serde reads one, or its refusal."""
    if not isinstance(value, str):
        raise failed(f"invalid type: {json_kind(value)}, expected a string")
    refusal = account_id_refusal(value)
    if refusal is not None:
        raise failed(refusal)
    return value


def required_account_id(fields: dict[str, Any]) -> str:
    """The request's `account_id` member, which it must have."""
    if "account_id" not in fields:
        raise failed("missing field `account_id`")
    return checked_account_id(fields["account_id"])


def checked_public_key(value: object) -> str:
    """A PublicKey, in its canonical text (a bare base58 key is ed25519)."""
    if not isinstance(value, str):
        raise failed("invalid type: expected a string for `public_key`")
    try:
        return canonical_public_key(value)
    except PublicKeyError as problem:
        raise failed(str(problem)) from None
