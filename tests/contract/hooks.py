"""Schemathesis hooks for the contract run, loaded through the SCHEMATHESIS_HOOKS variable.

They only steer generation towards the data the sample chain holds; every value they produce is
one the spec already admits, and every check runs unchanged. The contract test also runs a pass
without them, so the spec alone must be exact (tests/contract/test_schemathesis.py).

1. `CryptoHash` carries `format: near-crypto-hash`; the generator registered for it draws half of
   its hashes from the blocks the sample chain holds, so positive cases also read real blocks.
   The other half are random 32-byte hashes, which the spec's pattern admits as well.
2. Positive cases get, chosen deterministically from the generated value, a height folded into
   the sample chain's range for two thirds of the integer block ids (stored and skipped heights:
   200 and 422 answers), and an account id of the sample chain for a third of the account ids.

3. A transaction status's signed transaction (`signed_tx_base64`, `[signed_tx]`) in a positive
   case is replaced by one that decodes (base64 of borsh bytes, which the spec states as base64
   alone), so 400 stays a failure on those operations.

4. One check of their own, `same_answer_from_the_twin`: every request is sent again, byte for
   byte, to the twin server (the same sample chain on the other backend), whose answer must be
   the same: status, content type and body (a status document but for the members that name the
   server itself, its address and uptime). Every other check then holds for both backends
   while Hypothesis draws each case once, for the price of one more local request.

The sample values and the twin's URL come from variables the contract test sets; without them
the hooks do nothing but draw random 32-byte hashes for the format.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from typing import Any
from urllib.parse import urlsplit

import base58
import requests
import schemathesis
from hypothesis import strategies as st

from nearrpc.nearcore.transaction import signed_transaction_bytes, transaction_bytes

# Set by tests/contract/test_schemathesis.py from the sample chain (same names there).
KNOWN_HASHES_ENV = "CONTRACT_KNOWN_BLOCK_HASHES"
KNOWN_ACCOUNTS_ENV = "CONTRACT_KNOWN_ACCOUNTS"
HEIGHT_RANGE_ENV = "CONTRACT_HEIGHT_RANGE"  # e.g. "0-115": heights to fold integers into
TWIN_URL_ENV = "CONTRACT_TWIN_URL"  # e.g. "http://127.0.0.1:41234": the other backend's server


def _listed(name: str) -> list[str]:
    return [item for item in os.environ.get(name, "").split(",") if item]


KNOWN_HASHES = _listed(KNOWN_HASHES_ENV)
KNOWN_ACCOUNTS = _listed(KNOWN_ACCOUNTS_ENV)
_low, _, _high = os.environ.get(HEIGHT_RANGE_ENV, "").partition("-")
HEIGHT_RANGE = (int(_low), int(_high)) if _low and _high else None
TWIN_URL = os.environ.get(TWIN_URL_ENV, "").rstrip("/")


def _encode(raw: bytes) -> str:
    return base58.b58encode(raw).decode("ascii")


def crypto_hashes() -> st.SearchStrategy[str]:
    random_hashes = st.binary(min_size=32, max_size=32).map(_encode)
    if not KNOWN_HASHES:
        return random_hashes
    return st.one_of(st.sampled_from(KNOWN_HASHES), random_hashes)


schemathesis.openapi.format("near-crypto-hash", crypto_hashes())


def _stable_draw(seed: str) -> int:
    """A number in [0, 2**32) that depends on `seed` only (str hashes vary between runs)."""
    return zlib.crc32(seed.encode("utf-8", "surrogatepass"))


def _block_id(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and HEIGHT_RANGE is not None:
        low, high = HEIGHT_RANGE
        if _stable_draw(str(value)) % 3 != 0:  # two thirds of the heights
            return low + value % (high - low + 1)
    return value


def _account_id(value: Any) -> Any:
    if isinstance(value, str) and KNOWN_ACCOUNTS:
        draw = _stable_draw(value)
        if draw % 3 == 0:  # a third of the account ids
            return KNOWN_ACCOUNTS[(draw // 3) % len(KNOWN_ACCOUNTS)]
    return value


def adjust_positive_body(body: Any) -> Any:
    """The body with its block id and account id adjusted as the module docstring says."""
    if not isinstance(body, dict):
        return body
    params = body.get("params")
    if isinstance(params, dict):
        params = dict(params)
        if "block_id" in params:
            params["block_id"] = _block_id(params["block_id"])
        if "account_id" in params:
            params["account_id"] = _account_id(params["account_id"])
    elif isinstance(params, list) and len(params) == 1:
        params = [_block_id(params[0])]
    else:
        return body
    return {**body, "params": params}


def after_key_within_prefix(body: Any) -> Any:
    """A view_state page's `after_key_base64` made to start with its `prefix_base64`: nearcore
    refuses one outside the prefix while parsing, a rule JSON Schema cannot state (DEVIATIONS,
    `wire-view-state-proof-pages`), so a positive case is moved inside it."""
    params = body.get("params") if isinstance(body, dict) else None
    if not isinstance(params, dict):
        return body
    prefix, after = params.get("prefix_base64"), params.get("after_key_base64")
    if not isinstance(prefix, str) or not isinstance(after, str):
        return body
    try:
        prefix_bytes, after_bytes = base64.b64decode(prefix, validate=True), base64.b64decode(after, validate=True)
    except ValueError:
        return body
    if after_bytes.startswith(prefix_bytes):
        return body
    moved = base64.b64encode(prefix_bytes + after_bytes).decode()
    return {**body, "params": {**params, "after_key_base64": moved}}


# A transaction status may name a signed transaction (`signed_tx_base64`, `[signed_tx]`): its
# borsh bytes are what the server decodes while parsing, a rule JSON Schema cannot state (random
# base64 is PARSE_ERROR, 400). A positive case's text is replaced by a signed transaction that
# decodes, a different one per generated text (its nonce), so 400 stays a failure there.
_STATUS_METHODS = frozenset({"tx", "EXPERIMENTAL_tx_status"})


def _decodable_signed_transaction(seed: str) -> str:
    raw = transaction_bytes(
        signer_id="hooks.localnet",
        public_key="ed25519:" + "1" * 32,
        nonce=_stable_draw(seed),
        receiver_id="hooks.localnet",
        block_hash="1" * 32,
        actions=[{"Transfer": {"deposit": "1"}}],
    )
    return base64.b64encode(signed_transaction_bytes(raw, "ed25519:" + "1" * 64)).decode()


def signed_transaction_decodable(body: Any) -> Any:
    """A transaction status's signed transaction, if it names one, made one that decodes."""
    if not isinstance(body, dict) or body.get("method") not in _STATUS_METHODS:
        return body
    params = body.get("params")
    if isinstance(params, list) and len(params) == 1 and isinstance(params[0], str):
        return {**body, "params": [_decodable_signed_transaction(params[0])]}
    if isinstance(params, dict) and isinstance(params.get("signed_tx_base64"), str):
        signed = _decodable_signed_transaction(params["signed_tx_base64"])
        return {**body, "params": {**params, "signed_tx_base64": signed}}
    return body


@schemathesis.hook
def map_case(context: schemathesis.HookContext, case: schemathesis.Case[Any]) -> schemathesis.Case[Any]:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return case
    case.body = after_key_within_prefix(case.body)
    case.body = signed_transaction_decodable(case.body)
    # Only the parameterised methods carry block ids or account ids.
    if isinstance(case.body, dict) and case.body.get("method") in {
        "block",
        "EXPERIMENTAL_protocol_config",
        "EXPERIMENTAL_view_account",
    }:
        case.body = adjust_positive_body(case.body)
    return case


# Methods a read-only server answers METHOD_NOT_FOUND (HTTP 400) whatever their params: only
# `serve --sandbox` has them. Their own paths accept that 400 (schemathesis.toml); at POST / a
# positive case naming one is left out, so a 400 there stays a failure for every other method.
_SANDBOX_ONLY = frozenset({"sandbox_patch_state", "sandbox_fast_forward", "sandbox_snapshot", "sandbox_revert"})


def sandbox_only_at_root(case: schemathesis.Case[Any]) -> bool:
    """The case asks POST / for a method only `serve --sandbox` has."""
    body = case.body
    return case.operation.path == "/" and isinstance(body, dict) and body.get("method") in _SANDBOX_ONLY


@schemathesis.hook
def filter_case(context: schemathesis.HookContext, case: schemathesis.Case[Any]) -> bool:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return True
    return not sandbox_only_at_root(case)


# The Examples phase runs neither `filter_case` nor `map_case`: schemathesis' engine builds the
# spec's examples (generation/drivers.py `ExamplesGenerator`) and hands their list to this hook
# alone before sending each. Every example is positive data, so the same methods leave it here.
@schemathesis.hook
def before_add_examples(context: schemathesis.HookContext, examples: list[schemathesis.Case[Any]]) -> None:
    examples[:] = [case for case in examples if not sandbox_only_at_root(case)]


_twin_session = requests.Session()


# What a status document says about the server answering it rather than about the chain.
_SERVER_OWN = ("rpc_addr", "uptime_sec")


def _own_status(body: bytes) -> Any:
    """A status document (JSON-RPC `status` result or GET /status) without the members that are
    each server's own; None for any other body."""
    try:
        document = json.loads(body)
    except ValueError:
        return None
    if isinstance(document, dict) and isinstance(document.get("result"), dict):
        document = document["result"]
    if not isinstance(document, dict) or "node_public_key" not in document:
        return None
    return {key: value for key, value in document.items() if key not in _SERVER_OWN}


@schemathesis.check
def same_answer_from_the_twin(
    _ctx: schemathesis.CheckContext, response: schemathesis.Response, _case: schemathesis.Case[Any]
) -> bool | None:
    """The twin server answers the same request with the same status, content type and body.

    schemathesis reads a true return value as "skipped", and anything else as "checked"."""
    if not TWIN_URL:
        return True
    again = response.request.copy()
    path = urlsplit(again.url or "")._replace(scheme="", netloc="").geturl()
    again.url = TWIN_URL + path
    twin = _twin_session.send(again, timeout=30, allow_redirects=False)
    here = (response.status_code, response.headers.get("content-type", [""])[0], response.content_size)
    there = (twin.status_code, twin.headers.get("content-type", ""), len(twin.content))
    if _own_status(response.content) is not None and _own_status(response.content) == _own_status(twin.content):
        return None  # a status document: the same but for the server's own address and uptime
    # schemathesis may keep only the leading bytes of a large body (content_size is its length)
    if here != there or twin.content[: len(response.content)] != response.content:
        raise AssertionError(
            f"the twin backend answers differently: {here} {response.content[:300]!r} here, "
            f"{there} {twin.content[:300]!r} at {TWIN_URL}"
        )
    return None
