"""sandbox_patch_state's records read into the rows a block writes.

nearcore's sandbox (chain/jsonrpc/src/api/sandbox.rs, `RpcSandboxPatchStateRequest { records }`)
takes `StateRecord`s as core/primitives/src/state_record.rs serializes them:
- `{"Account": {"account_id", "account": {"amount", "locked", "code_hash", "storage_usage", ...}}}`
- `{"AccessKey": {"account_id", "public_key", "access_key": {"nonce", "permission"}}}`
- `{"Contract": {"account_id", "code": <base64>}}`
- `{"Data": {"account_id", "data_key": <base64>, "value": <base64>}}`
and writes them into the state as they are, without the runtime's checks (balances, storage
usage). The receipt and delayed-receipt records a node's state dump also has are refused here.
nearcore keys contract code by account, so patched code is the account's code: the account's
`code_hash` follows it (from the Account record of the same patch, or the stored account).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import based58
import orjson

from nearrpc.methods.sandbox_hooks import PatchRefused
from nearrpc.nearcore.account_id import account_id_problem
from nearrpc.nearcore.public_key import PublicKeyError, canonical_public_key
from nearrpc.sandbox.chain.views import access_key_json, permission_from_view
from nearrpc.sandbox.runtime.model import AccessKey

# Records per patch at most: a patch lands in one block and one store batch. The JSON-RPC body
# limit (10 MiB) bounds it too; this keeps a block's writes to what a real patch needs.
MAX_RECORDS: Final = 100_000
_KINDS: Final = ("Account", "AccessKey", "Contract", "Data")


class InvalidStateRecord(PatchRefused):
    """A record sandbox_patch_state cannot apply: the message says which one and why."""


@dataclass(slots=True)
class Patch:
    """The rows of one patch: account and access key views, contract code, contract data."""

    accounts: dict[str, dict[str, Any]] = field(default_factory=dict)
    access_keys: dict[tuple[str, str], bytes] = field(default_factory=dict)
    codes: dict[str, bytes] = field(default_factory=dict)  # code hash → code
    code_of: dict[str, str] = field(default_factory=dict)  # account → its patched code's hash
    data: dict[tuple[str, bytes], bytes] = field(default_factory=dict)


def _text(record: Mapping[str, Any], name: str, where: str) -> str:
    value = record.get(name)
    if not isinstance(value, str):
        raise InvalidStateRecord(f"{where}: `{name}` must be a string")
    return value


def _account_id(record: Mapping[str, Any], where: str) -> str:
    account_id = _text(record, "account_id", where)
    problem = account_id_problem(account_id)
    if problem is not None:
        raise InvalidStateRecord(f"{where}: invalid account_id {account_id!r}: {problem}")
    return account_id


def _base64(record: Mapping[str, Any], name: str, where: str) -> bytes:
    try:
        return base64.b64decode(_text(record, name, where), validate=True)
    except (binascii.Error, ValueError) as error:
        raise InvalidStateRecord(f"{where}: `{name}` is not base64: {error}") from None


def _amount(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidStateRecord(f"{where}: `{name}` must be a decimal string")
    try:
        amount = int(value)
    except ValueError:
        raise InvalidStateRecord(f"{where}: `{name}` must be a decimal string") from None
    if not 0 <= amount < 1 << 128:
        raise InvalidStateRecord(f"{where}: `{name}` must be a u128")
    return amount


def _account_view(account: Any, where: str) -> dict[str, Any]:
    if not isinstance(account, dict):
        raise InvalidStateRecord(f"{where}: `account` must be an object")
    code_hash = account.get("code_hash", "11111111111111111111111111111111")
    if not isinstance(code_hash, str) or len(based58.b58decode(code_hash.encode("ascii"))) != 32:
        raise InvalidStateRecord(f"{where}: `code_hash` must be a base58 hash of 32 bytes")
    usage = account.get("storage_usage", 0)
    if isinstance(usage, bool) or not isinstance(usage, int) or not 0 <= usage < 1 << 64:
        raise InvalidStateRecord(f"{where}: `storage_usage` must be a u64")
    view = {
        "amount": str(_amount(account.get("amount"), "amount", where)),
        "locked": str(_amount(account.get("locked", "0"), "locked", where)),
        "code_hash": code_hash,
        "storage_usage": usage,
        "storage_paid_at": 0,
    }
    for member in ("global_contract_hash", "global_contract_account_id"):
        if isinstance(account.get(member), str):
            view[member] = account[member]
    return view


def _access_key(record: Mapping[str, Any], where: str) -> bytes:
    key = record.get("access_key")
    if not isinstance(key, dict):
        raise InvalidStateRecord(f"{where}: `access_key` must be an object")
    nonce = key.get("nonce", 0)
    if isinstance(nonce, bool) or not isinstance(nonce, int) or not 0 <= nonce < 1 << 64:
        raise InvalidStateRecord(f"{where}: `nonce` must be a u64")
    try:
        permission = permission_from_view(key.get("permission"))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise InvalidStateRecord(f'{where}: `permission` must be "FullAccess" or {{"FunctionCall": ...}}') from None
    return access_key_json(AccessKey(nonce, permission))


def read_patch(records: Sequence[Mapping[str, Any]]) -> Patch:
    """The rows of `records`, or InvalidStateRecord for the first one that cannot be applied."""
    if len(records) > MAX_RECORDS:
        raise InvalidStateRecord(f"{len(records)} records in one patch; at most {MAX_RECORDS}")
    patch = Patch()
    for index, record in enumerate(records):
        where = f"record {index}"
        if not isinstance(record, Mapping) or len(record) != 1 or next(iter(record)) not in _KINDS:
            raise InvalidStateRecord(f"{where}: expected one of {', '.join(_KINDS)} (an object with one of them)")
        kind, body = next(iter(record.items()))
        if not isinstance(body, Mapping):
            raise InvalidStateRecord(f"{where}: `{kind}` must be an object")
        account_id = _account_id(body, where)
        if kind == "Account":
            patch.accounts[account_id] = _account_view(body.get("account"), where)
        elif kind == "AccessKey":
            try:
                public_key = canonical_public_key(_text(body, "public_key", where))
            except PublicKeyError as problem:
                raise InvalidStateRecord(f"{where}: invalid public_key: {problem}") from None
            patch.access_keys[(account_id, public_key)] = _access_key(body, where)
        elif kind == "Contract":
            code = _base64(body, "code", where)
            code_hash = based58.b58encode(hashlib.sha256(code).digest()).decode("ascii")
            patch.codes[code_hash] = code
            patch.code_of[account_id] = code_hash
        else:
            patch.data[(account_id, _base64(body, "data_key", where))] = _base64(body, "value", where)
    return patch


def patched_account(patch: Patch, account_id: str, stored: bytes | None) -> bytes | None:
    """The account view a patch writes for `account_id` (None: it writes none): its Account
    record, or the stored account, with the code_hash of code patched for it."""
    view = patch.accounts.get(account_id)
    if view is None:
        if account_id not in patch.code_of or stored is None:
            return None
        view = orjson.loads(stored)
    if account_id in patch.code_of:
        view = {**view, "code_hash": patch.code_of[account_id]}
    return orjson.dumps(view)
