"""The params of the state changes methods (nearcore's chain/jsonrpc/src/api/changes.rs).

`EXPERIMENTAL_changes_in_block` and `block_effects` take an object holding a block reference.
`EXPERIMENTAL_changes` and `changes` take one too, and beside it their StateChangesRequestView:
an enum tagged by `changes_type` and flattened beside the block reference, which serde reads
first. Unknown members are ignored; the chosen variant's members are required. Refusals read as
serde's.

nearcore takes any number of `account_ids` or `keys` its 10 MB body allows; checking each id
here costs microseconds on the event loop, so 100,000 of them held every other request for a
second and more. A request asks about at most MAX_ASKED of them (spec/DEVIATIONS.md), and a
longer list is refused before any is looked at."""

from __future__ import annotations

from typing import Any, Final

from nearrpc.generated.methods import MethodSpec
from nearrpc.methods.params.readers import Reader, block_reference, expect_object, failed, json_kind, reference_alone
from nearrpc.nearcore.account_id import account_id_refusal
from nearrpc.nearcore.echo import shown
from nearrpc.nearcore.public_key import PublicKeyError, canonical_public_key

# each variant's members, in the order serde reports a missing one
CHANGES_TYPES: Final[dict[str, tuple[str, ...]]] = {
    "account_changes": ("account_ids",),
    "single_access_key_changes": ("keys",),
    "all_access_key_changes": ("account_ids",),
    "contract_code_changes": ("account_ids",),
    "data_changes": ("account_ids", "key_prefix_base64"),
}
_EXPECTED: Final = ", ".join(f"`{name}`" for name in CHANGES_TYPES)
MAX_ASKED: Final = 1000  # account ids or keys in one request


def changes_params(method: MethodSpec, params: object) -> object:
    fields = expect_object(params, method.params_schema)
    normalised = block_reference(fields)  # the reference is read first, then the request
    normalised.update(changes_members(fields))
    return normalised


def changes_members(fields: dict[str, Any]) -> dict[str, Any]:
    """`changes_type` and its variant's members from the request object."""
    if "changes_type" not in fields:
        raise failed("missing field `changes_type`")
    changes_type = fields["changes_type"]
    if not isinstance(changes_type, str):
        raise failed(f"invalid type: {json_kind(changes_type)}, expected variant identifier")
    if changes_type not in CHANGES_TYPES:
        raise failed(f"unknown variant `{shown(changes_type)}`, expected one of {_EXPECTED}")
    members: dict[str, Any] = {"changes_type": changes_type}
    for name in CHANGES_TYPES[changes_type]:
        if name not in fields:
            raise failed(f"missing field `{name}`")
        asked = fields[name]
        if isinstance(asked, list) and len(asked) > MAX_ASKED:
            raise failed(f"invalid length {len(asked)}, expected at most {MAX_ASKED} elements in `{name}`")
        if isinstance(asked, list):
            asked = _read_keys(asked) if name == "keys" else _read_account_ids(asked)
        members[name] = asked
    return members


# The items of the lists are read here as nearcore reads them, in serde's order (item by item,
# an item's account id before its key), so a refusal is in nearcore's words: the spec's patterns
# in the model's refusal are regular expressions, the key's of a thousand characters. From the
# first item of another JSON type on, the items are left to the model, which words that as serde.


def _read_account_ids(account_ids: list[Any]) -> list[Any]:
    for value in account_ids:
        if not isinstance(value, str):
            break
        refusal = account_id_refusal(value)
        if refusal is not None:
            raise failed(refusal)
    return account_ids


def _read_keys(keys: list[Any]) -> list[Any]:
    """`keys` with each public key read as nearcore reads one (a bare base58 key is ed25519)."""
    read: list[Any] = []
    for index, item in enumerate(keys):
        if not (isinstance(item, dict) and isinstance(item.get("account_id"), str)):
            return read + keys[index:]
        refusal = account_id_refusal(item["account_id"])
        if refusal is not None:
            raise failed(refusal)
        if not isinstance(item.get("public_key"), str):
            return read + keys[index:]
        try:
            read.append({**item, "public_key": canonical_public_key(item["public_key"])})
        except PublicKeyError as problem:
            raise failed(str(problem)) from None
    return read


READERS: Final[dict[str, Reader]] = {
    "EXPERIMENTAL_changes_in_block": reference_alone,
    "block_effects": reference_alone,
    "EXPERIMENTAL_changes": changes_params,
    "changes": changes_params,
}
