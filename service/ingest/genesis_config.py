"""nearcore's genesis.json, mapped onto the interface: the GenesisConfig projection, the
account view of an `Account` record, the access key of an `AccessKey` record and the code of a
`Contract` record."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nearrpc.nearcore.genesis_fields import GENESIS_DEFAULTS, GENESIS_FIELD_ORDER
from nearrpc.nearcore.views import ZERO_HASH

# genesis.json members that are not config fields at all.
_NOT_CONFIG = ("records",)


@dataclass(frozen=True, slots=True)
class ProjectedConfig:
    config: dict[str, Any]  # GenesisConfig fields in nearcore's order
    dropped: tuple[str, ...]  # members of the file that are not GenesisConfig fields
    defaulted: tuple[str, ...]  # fields the file left out, filled with nearcore's defaults


class ProjectionError(ValueError):
    """The file lacks fields GenesisConfig requires."""


def project_genesis_config(members: Mapping[str, Any]) -> ProjectedConfig:
    """The `genesis_config` result a node started from this file answers: the GenesisConfig
    fields in nearcore's order, defaults for the optional ones the file leaves out, and
    nothing else (legacy and unknown members are dropped, as nearcore ignores them)."""
    missing = [f for f in GENESIS_FIELD_ORDER if f not in members and f not in GENESIS_DEFAULTS]
    if missing:
        raise ProjectionError(f"genesis config lacks required field(s) {', '.join(missing)}")
    config = {field: members[field] if field in members else GENESIS_DEFAULTS[field] for field in GENESIS_FIELD_ORDER}
    fields = set(GENESIS_FIELD_ORDER)
    dropped = tuple(key for key in members if key not in fields and key not in _NOT_CONFIG)
    defaulted = tuple(field for field in GENESIS_FIELD_ORDER if field not in members)
    return ProjectedConfig(config, dropped, defaulted)


class RecordError(ValueError):
    """A genesis record does not have the shape nearcore writes."""


def record_kind(record: object) -> tuple[str, Any]:
    """(kind, body) of a StateRecord: an object with exactly one member, the kind's name."""
    if not isinstance(record, dict) or len(record) != 1:
        raise RecordError("a record must be an object with exactly one member (its kind, e.g. Account)")
    ((kind, body),) = record.items()
    return str(kind), body


def _balance(value: object, field: str) -> str:
    # nearcore writes balances (u128 yoctoNEAR) as decimal strings; very old files used numbers
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else value
    if not isinstance(text, str) or not text.isascii() or not text.isdigit():
        raise RecordError(f"account.{field} must be a decimal string of yoctoNEAR, got {value!r}")
    return text


def account_state(body: object) -> tuple[str, dict[str, Any]]:
    """(account id, AccountView without block_height/block_hash) of an Account record body
    `{"account_id": ..., "account": {"amount", "locked", "code_hash", "storage_usage", ...}}`."""
    if not isinstance(body, dict):
        raise RecordError("an Account record must hold an object")
    account_id, account = body.get("account_id"), body.get("account")
    if not isinstance(account_id, str):
        raise RecordError("an Account record needs a string account_id")
    if not isinstance(account, dict):
        raise RecordError(f"Account {account_id}: the record needs an account object")
    for field in ("amount", "locked", "storage_usage"):
        if field not in account:
            raise RecordError(f"Account {account_id}: account.{field} is missing")
    view: dict[str, Any] = {
        "amount": _balance(account["amount"], "amount"),
        "locked": _balance(account["locked"], "locked"),
        # accounts without a local contract (global-contract users too) have the zero hash
        "code_hash": account.get("code_hash") or ZERO_HASH,
        "storage_usage": account["storage_usage"],
        "storage_paid_at": 0,  # deprecated; nearcore always answers 0
    }
    for field in ("global_contract_hash", "global_contract_account_id"):
        if account.get(field) is not None:
            view[field] = account[field]
    return account_id, view


def access_key_record(body: object) -> tuple[str, str, dict[str, Any]]:
    """(account id, public key, AccessKeyView) of an AccessKey record body
    `{"account_id": ..., "public_key": ..., "access_key": {"nonce", "permission"}}`."""
    if not isinstance(body, dict):
        raise RecordError("an AccessKey record must hold an object")
    account_id, public_key, access_key = body.get("account_id"), body.get("public_key"), body.get("access_key")
    if not isinstance(account_id, str) or not isinstance(public_key, str):
        raise RecordError("an AccessKey record needs a string account_id and public_key")
    if not isinstance(access_key, dict) or "nonce" not in access_key or "permission" not in access_key:
        raise RecordError(f"AccessKey {public_key} of {account_id}: the record needs access_key.nonce and .permission")
    return account_id, public_key, {"nonce": access_key["nonce"], "permission": access_key["permission"]}


def contract_record(body: object) -> tuple[str, bytes]:
    """(account id, code) of a Contract record body `{"account_id": ..., "code": <base64>}`."""
    if not isinstance(body, dict) or not isinstance(body.get("account_id"), str):
        raise RecordError("a Contract record needs an object with a string account_id")
    try:
        return body["account_id"], base64.b64decode(body.get("code", ""), validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise RecordError(f"Contract of {body['account_id']}: code must be base64") from None


def data_record(body: object) -> tuple[str, bytes, bytes]:
    """(account id, storage key, value) of a Data record body: one key of the account's contract
    state, `{"account_id": ..., "data_key": <base64>, "value": <base64>}` (nearcore's
    StateRecord::Data)."""
    if not isinstance(body, dict) or not isinstance(body.get("account_id"), str):
        raise RecordError("a Data record needs an object with a string account_id")
    decoded = []
    for member in ("data_key", "value"):
        text = body.get(member)
        try:
            if not isinstance(text, str):
                raise TypeError(member)
            decoded.append(base64.b64decode(text, validate=True))
        except (binascii.Error, TypeError, ValueError):
            raise RecordError(f"Data of {body['account_id']}: {member} must be a base64 string") from None
    return body["account_id"], decoded[0], decoded[1]
