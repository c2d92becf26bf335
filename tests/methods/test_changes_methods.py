"""EXPERIMENTAL_changes_in_block / block_effects and EXPERIMENTAL_changes / changes from a real
server over a real SQLite store, whose rows, transactions and receipts are written through the
batch methods: every changes_type, every request form, every error, each answer validated
against the spec. The derivation's own cases: tests/methods/test_changes_derivation.py."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import based58
import httpx
import orjson
import pytest

from nearrpc.nearcore.views import ZERO_HASH
from nearrpc.sample import sample_chain
from nearrpc.spec import validate_component
from nearrpc.store import ACCOUNTS_CHOSEN, StoredReceipt, StoredTransaction, WriteBatch, held_account, open_store
from tests.support.live_server import running_server
from tests.support.rpc import Answer, call, checked

pytestmark = pytest.mark.live

KINDS_METHODS = ("EXPERIMENTAL_changes_in_block", "block_effects")
CHANGES_METHODS = ("EXPERIMENTAL_changes", "changes")
OLD_CODE = b"\x00asm\x01\x00\x00\x00old"
NEW_CODE = b"\x00asm\x01\x00\x00\x00new"


def _hash(data: bytes) -> str:
    return based58.b58encode(hashlib.sha256(data).digest()).decode()


def _key(seed: str) -> str:
    return "ed25519:" + _hash(seed.encode())


ALICE_KEY, BOB_KEY, CAROL_KEY = _key("alice"), _key("bob"), _key("carol")
OLD_HASH, NEW_HASH = _hash(OLD_CODE), _hash(NEW_CODE)


def _account(amount: int, code_hash: str = ZERO_HASH) -> bytes:
    view = {"amount": str(amount), "locked": "0", "code_hash": code_hash, "storage_usage": 182, "storage_paid_at": 0}
    return orjson.dumps(view)


def _access_key(nonce: int) -> bytes:
    return orjson.dumps({"nonce": nonce, "permission": "FullAccess"})


def _outcome(outcome_id: str, block_hash: str, executor: str, status: dict[str, Any]) -> dict[str, Any]:
    return {
        "proof": [],
        "block_hash": block_hash,
        "id": outcome_id,
        "outcome": {
            "logs": [],
            "receipt_ids": [],
            "gas_burnt": 2428000000000,
            "tokens_burnt": "242800000000000000000",
            "executor_id": executor,
            "status": status,
            "metadata": {"version": 1, "gas_profile": None},
        },
    }


def _receipt(receipt_id: str, receiver: str, actions: list[Any], block_hash: str, height: int) -> StoredReceipt:
    view = {
        "predecessor_id": "alice.near",
        "receiver_id": receiver,
        "receipt_id": receipt_id,
        "receipt": {
            "Action": {
                "signer_id": "alice.near",
                "signer_public_key": ALICE_KEY,
                "gas_price": "100000000",
                "output_data_receivers": [],
                "input_data_ids": [],
                "actions": actions,
            }
        },
        "priority": 0,
    }
    validate_component("RpcReceiptResponse", view)
    outcome = _outcome(receipt_id, block_hash, receiver, {"SuccessValue": ""})
    validate_component("ExecutionOutcomeWithIdView", outcome)
    return StoredReceipt(receipt_id, block_hash, height, 0, orjson.dumps(view), orjson.dumps(outcome))


def _transaction(tx_hash: str, receiver: str, nonce: int, block_hash: str, height: int) -> StoredTransaction:
    signed = {
        "signer_id": "alice.near",
        "public_key": ALICE_KEY,
        "nonce": nonce,
        "receiver_id": receiver,
        "actions": [{"Transfer": {"deposit": "10"}}],
        "priority_fee": 0,
        "signature": "ed25519:" + based58.b58encode(bytes(64)).decode(),
        "hash": tx_hash,
    }
    view = {
        "final_execution_status": "FINAL",
        "status": {"SuccessValue": ""},
        "transaction": signed,
        "transaction_outcome": _outcome(tx_hash, block_hash, "alice.near", {"SuccessReceiptId": _hash(b"R1")}),
        "receipts_outcome": [],
        "receipts": [],
    }
    validate_component("RpcTransactionResponse", view)
    return StoredTransaction(tx_hash, "alice.near", block_hash, height, 0, orjson.dumps(view))


T1, T2 = _hash(b"T1"), _hash(b"T2")
R1, R2, R3, R4 = (_hash(name) for name in (b"R1", b"R2", b"R3", b"R4"))


def _write_chain(batch: WriteBatch, heights: tuple[int, ...]) -> dict[int, str]:
    """The sample chain's configs, epochs and its blocks at `heights`; their hashes by height."""
    chain = sample_chain()
    batch.put_genesis_config(chain.genesis_config_json)
    batch.put_client_config(chain.client_config_json)
    for epoch in chain.epochs:
        batch.put_epoch(epoch)
    blocks = {block.height: block for block in chain.blocks}
    for height in heights:
        batch.put_block(blocks[height])
    return {height: blocks[height].hash for height in heights}


def _write_rows(batch: WriteBatch, hashes: dict[int, str]) -> None:
    """Genesis state at 0, nothing at 1, every kind of change at 2, one transfer at 3."""
    batch.put_contract_code(OLD_HASH, OLD_CODE)
    batch.put_contract_code(NEW_HASH, NEW_CODE)
    for account_id, amount in (("alice.near", 1000), ("bob.near", 10), ("carol.near", 5), ("dave.near", 5)):
        batch.put_account_state(account_id, 0, _account(amount))
    batch.put_account_state("contract.near", 0, _account(50, OLD_HASH))
    batch.put_access_key("alice.near", ALICE_KEY, 0, _access_key(1))
    batch.put_access_key("carol.near", CAROL_KEY, 0, _access_key(1))
    batch.put_contract_data("contract.near", b"old", 0, b"x")
    # height 2: alice sends (T1), bob gets a key (R1), carol is deleted (R2), dave deploys (R3),
    # contract.near's method writes and removes data (R4)
    block = hashes[2]
    batch.put_account_state("alice.near", 2, _account(980))
    batch.put_access_key("alice.near", ALICE_KEY, 2, _access_key(2))
    batch.put_transaction(_transaction(T1, "bob.near", 2, block, 2))
    batch.put_account_state("bob.near", 2, _account(20))
    batch.put_access_key("bob.near", BOB_KEY, 2, _access_key(0))
    add_key = {"AddKey": {"public_key": BOB_KEY, "access_key": {"nonce": 0, "permission": "FullAccess"}}}
    batch.put_receipt(_receipt(R1, "bob.near", [{"Transfer": {"deposit": "10"}}, add_key], block, 2))
    batch.put_account_state("carol.near", 2, None)
    batch.put_access_key("carol.near", CAROL_KEY, 2, None)
    batch.put_receipt(_receipt(R2, "carol.near", [{"DeleteAccount": {"beneficiary_id": "alice.near"}}], block, 2))
    batch.put_account_state("dave.near", 2, _account(4, NEW_HASH))
    deploy = {"DeployContract": {"code": base64.b64encode(hashlib.sha256(NEW_CODE).digest()).decode()}}
    batch.put_receipt(_receipt(R3, "dave.near", [deploy], block, 2))
    batch.put_account_state("contract.near", 2, _account(51, OLD_HASH))
    batch.put_contract_data("contract.near", b"old", 2, None)
    batch.put_contract_data("contract.near", b"STATE", 2, b"\x01")
    call_set = {"FunctionCall": {"method_name": "set", "args": "", "gas": 30000000000000, "deposit": "0"}}
    batch.put_receipt(_receipt(R4, "contract.near", [call_set], block, 2))
    if 3 in hashes:
        batch.put_account_state("alice.near", 3, _account(970))
        batch.put_access_key("alice.near", ALICE_KEY, 3, _access_key(3))
        batch.put_transaction(_transaction(T2, "bob.near", 3, hashes[3], 3))


def _serve(folder: Path, write: Any) -> Iterator[tuple[httpx.Client, dict[int, str]]]:
    store = folder / "store.sqlite"
    with open_store(store, "write") as writer, writer.batch() as batch:
        hashes: dict[int, str] = write(batch)
    with running_server(store, folder / "server.log") as live, httpx.Client(base_url=live.url) as http:
        yield http, hashes


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, dict[int, str]]]:
    def write(batch: WriteBatch) -> dict[int, str]:
        hashes = _write_chain(batch, (0, 1, 2, 3))
        _write_rows(batch, hashes)
        return hashes

    yield from _serve(tmp_path_factory.mktemp("changes"), write)


@pytest.fixture(scope="module")
def gap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, dict[int, str]]]:
    """Block 3 without its parent (block 2)."""

    def write(batch: WriteBatch) -> dict[int, str]:
        hashes = _write_chain(batch, (0, 1, 3))
        batch.put_account_state("alice.near", 0, _account(1000))
        batch.put_account_state("alice.near", 3, _account(970))
        return hashes

    yield from _serve(tmp_path_factory.mktemp("changes-gap"), write)


@pytest.fixture(scope="module")
def chosen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, dict[int, str]]]:
    """The same rows in a recording of chosen accounts that holds alice's only."""

    def write(batch: WriteBatch) -> dict[int, str]:
        hashes = _write_chain(batch, (0, 1, 2, 3))
        _write_rows(batch, hashes)
        batch.put_fetched(ACCOUNTS_CHOSEN)
        batch.put_fetched(held_account("alice.near"))
        return hashes

    yield from _serve(tmp_path_factory.mktemp("changes-chosen"), write)


@pytest.fixture(scope="module")
def no_blocks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    def write(batch: WriteBatch) -> dict[int, str]:
        return _write_chain(batch, ())

    for http, _ in _serve(tmp_path_factory.mktemp("changes-empty"), write):
        yield http


def _ask(http: httpx.Client, method: str, params: Any) -> Answer:
    """Asked at POST / and at POST /<method>, which answer alike; validated against the spec."""
    answer = checked(call(http, method, params), method)
    on_path = checked(call(http, method, params, path=f"/{method}"), method)
    assert (on_path.status, on_path.body) == (answer.status, answer.body)
    return answer


# block 2's rows in nearcore's trie order: accounts, code, access keys, contract data
TOUCHED_AT_2 = [
    {"type": "account_touched", "account_id": "alice.near"},
    {"type": "account_touched", "account_id": "bob.near"},
    {"type": "account_touched", "account_id": "carol.near"},
    {"type": "account_touched", "account_id": "contract.near"},
    {"type": "account_touched", "account_id": "dave.near"},
    {"type": "contract_code_touched", "account_id": "carol.near"},  # a deleted account's code key
    {"type": "contract_code_touched", "account_id": "dave.near"},
    {"type": "access_key_touched", "account_id": "alice.near"},
    {"type": "access_key_touched", "account_id": "bob.near"},
    {"type": "access_key_touched", "account_id": "carol.near"},
    {"type": "data_touched", "account_id": "contract.near"},
    {"type": "data_touched", "account_id": "contract.near"},
]


@pytest.mark.parametrize("method", KINDS_METHODS)
def test_changes_in_block_lists_every_touched_row(chain: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    http, hashes = chain
    for params in ({"block_id": 2}, {"block_id": hashes[2]}, {"finality": "near-final"}):
        answer = _ask(http, method, params)
        assert answer.status == 200
        assert answer.result == {"block_hash": hashes[2], "changes": TOUCHED_AT_2}
    # every kind of change is there: dropping one fails this test
    kinds = {kind["type"] for kind in _ask(http, method, {"block_id": 2}).result["changes"]}
    assert kinds == {"account_touched", "contract_code_touched", "access_key_touched", "data_touched"}


@pytest.mark.parametrize("method", KINDS_METHODS)
def test_changes_in_block_by_every_reference(chain: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    http, hashes = chain
    expected = {
        "optimistic": (3, [{"type": "account_touched", "account_id": "alice.near"},
                           {"type": "access_key_touched", "account_id": "alice.near"}]),
        "final": (1, []),  # a block without changes
    }  # fmt: skip
    for finality, (height, changes) in expected.items():
        block = checked(call(http, "block", {"finality": finality}), "block").result["header"]["hash"]
        assert block == hashes[height]
        assert _ask(http, method, {"finality": finality}).result == {"block_hash": block, "changes": changes}
    for checkpoint in ("genesis", "earliest_available"):  # the genesis block: its state is no change
        answer = _ask(http, method, {"sync_checkpoint": checkpoint})
        assert answer.result == {"block_hash": hashes[0], "changes": []}


@pytest.mark.parametrize("method", CHANGES_METHODS)
def test_account_changes(chain: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    http, hashes = chain
    params = {"block_id": 2, "changes_type": "account_changes",
              "account_ids": ["contract.near", "carol.near", "alice.near", "nobody.near", "alice.near"]}  # fmt: skip
    answer = _ask(http, method, params)
    alice = {"cause": {"type": "transaction_processing", "tx_hash": T1}, "type": "account_update",
             "change": {"account_id": "alice.near", **orjson.loads(_account(980))}}  # fmt: skip
    assert answer.result == {"block_hash": hashes[2], "changes": [
        {"cause": {"type": "action_receipt_gas_reward", "receipt_hash": R4}, "type": "account_update",
         "change": {"account_id": "contract.near", **orjson.loads(_account(51, OLD_HASH))}},
        {"cause": {"type": "receipt_processing", "receipt_hash": R2}, "type": "account_deletion",
         "change": {"account_id": "carol.near"}},
        alice,
        alice,
    ]}  # fmt: skip
    for change in answer.result["changes"]:
        validate_component("StateChangeWithCauseView", change)


@pytest.mark.parametrize("method", CHANGES_METHODS)
def test_access_key_changes(chain: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    http, hashes = chain
    every = _ask(http, method, {"finality": "near-final", "changes_type": "all_access_key_changes",
                                "account_ids": ["carol.near", "bob.near"]})  # fmt: skip
    assert every.result == {"block_hash": hashes[2], "changes": [
        {"cause": {"type": "receipt_processing", "receipt_hash": R2}, "type": "access_key_deletion",
         "change": {"account_id": "carol.near", "public_key": CAROL_KEY}},
        {"cause": {"type": "receipt_processing", "receipt_hash": R1}, "type": "access_key_update",
         "change": {"account_id": "bob.near", "public_key": BOB_KEY, "access_key": orjson.loads(_access_key(0))}},
    ]}  # fmt: skip
    single = _ask(http, method, {"block_id": hashes[2], "changes_type": "single_access_key_changes",
                                 "keys": [{"account_id": "alice.near", "public_key": ALICE_KEY},
                                          {"account_id": "alice.near", "public_key": BOB_KEY}]})  # fmt: skip
    assert single.result == {"block_hash": hashes[2], "changes": [
        {"cause": {"type": "transaction_processing", "tx_hash": T1}, "type": "access_key_update",
         "change": {"account_id": "alice.near", "public_key": ALICE_KEY, "access_key": orjson.loads(_access_key(2))}},
    ]}  # fmt: skip


@pytest.mark.parametrize("method", CHANGES_METHODS)
def test_contract_code_changes(chain: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    http, hashes = chain
    answer = _ask(http, method, {"block_id": 2, "changes_type": "contract_code_changes",
                                 "account_ids": ["dave.near", "contract.near", "carol.near"]})  # fmt: skip
    assert answer.result == {"block_hash": hashes[2], "changes": [
        {"cause": {"type": "receipt_processing", "receipt_hash": R3}, "type": "contract_code_update",
         "change": {"account_id": "dave.near", "code_base64": base64.b64encode(NEW_CODE).decode()}},
        {"cause": {"type": "receipt_processing", "receipt_hash": R2}, "type": "contract_code_deletion",
         "change": {"account_id": "carol.near"}},
    ]}  # fmt: skip


@pytest.mark.parametrize("method", CHANGES_METHODS)
def test_data_changes(chain: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    http, hashes = chain
    cause = {"type": "receipt_processing", "receipt_hash": R4}
    every = _ask(http, method, {"block_id": 2, "changes_type": "data_changes",
                                "account_ids": ["contract.near"], "key_prefix_base64": ""})  # fmt: skip
    assert every.result == {"block_hash": hashes[2], "changes": [
        {"cause": cause, "type": "data_update",
         "change": {"account_id": "contract.near", "key_base64": "U1RBVEU=", "value_base64": "AQ=="}},
        {"cause": cause, "type": "data_deletion", "change": {"account_id": "contract.near", "key_base64": "b2xk"}},
    ]}  # fmt: skip
    prefixed = _ask(http, method, {"sync_checkpoint": "genesis", "changes_type": "data_changes",
                                   "account_ids": ["contract.near"], "key_prefix_base64": "b2w="})  # fmt: skip
    assert prefixed.result == {"block_hash": hashes[0], "changes": []}
    at_block = _ask(http, method, {"block_id": 2, "changes_type": "data_changes",
                                   "account_ids": ["contract.near"], "key_prefix_base64": "b2w="})  # fmt: skip
    assert at_block.result["changes"] == every.result["changes"][1:]


def _error(answer: Answer, status: int, cause: dict[str, Any]) -> None:
    assert answer.status == status
    assert answer.error["cause"] == cause
    assert answer.error["data"] == cause  # the changes methods send the cause itself as `data`


@pytest.mark.parametrize("method", (*KINDS_METHODS, *CHANGES_METHODS))
def test_unknown_blocks(gap: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    http, hashes = gap
    extra = {"changes_type": "account_changes", "account_ids": ["alice.near"]} if method in CHANGES_METHODS else {}
    unknown = {"name": "UNKNOWN_BLOCK", "info": {}}
    _error(_ask(http, method, {"block_id": 2, **extra}), 422, unknown)  # a height below the head
    _error(_ask(http, method, {"block_id": 9, **extra}), 200, unknown)
    _error(_ask(http, method, {"block_id": _hash(b"nothing"), **extra}), 200, unknown)
    # block 3 is stored, its parent is not: its rows are not known to be its changes
    missing = _ask(http, method, {"block_id": hashes[3], **extra})
    assert missing.status == 500 and missing.error["name"] == "INTERNAL_ERROR"
    message = missing.error["cause"]["info"]["error_message"]
    assert f"does not hold block {sample_chain().blocks[2].hash}, the parent of block {hashes[3]}" in message
    assert missing.error["data"] == missing.error["cause"]


@pytest.mark.parametrize("method", (*KINDS_METHODS, *CHANGES_METHODS))
def test_a_store_without_blocks(no_blocks: httpx.Client, method: str) -> None:
    extra = {"changes_type": "all_access_key_changes", "account_ids": ["a.near"]} if method in CHANGES_METHODS else {}
    _error(_ask(no_blocks, method, {"sync_checkpoint": "earliest_available", **extra}), 200, {"name": "NOT_SYNCED_YET"})
    for reference in ({"finality": "final"}, {"sync_checkpoint": "genesis"}, {"block_id": 0}):
        _error(_ask(no_blocks, method, {**reference, **extra}), 200, {"name": "UNKNOWN_BLOCK", "info": {}})


def _keys(first_account: str, second_key: str) -> dict[str, Any]:
    """A single_access_key_changes request of two items: `first_account` with a valid key, then
    test.near with `second_key`."""
    return {"block_id": 2, "changes_type": "single_access_key_changes", "keys": [
        {"account_id": first_account, "public_key": "ed25519:" + "1" * 32},
        {"account_id": "test.near", "public_key": second_key},
    ]}  # fmt: skip


@pytest.mark.parametrize("method", CHANGES_METHODS)
def test_a_bare_base58_key_is_an_ed25519_key(chain: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    """nearcore reads a key without its type as ed25519, in a changes request as in the views."""
    http, _ = chain
    bare, typed = (_ask(http, method, _keys("test.near", key)) for key in ("1" * 32, "ed25519:" + "1" * 32))
    assert bare.status == typed.status == 200 and bare.result == typed.result


@pytest.mark.parametrize("method", CHANGES_METHODS)
def test_requests_nearcore_refuses(chain: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    """serde reads the flattened block reference first, then the request tagged by changes_type."""
    http, _ = chain
    variants = ", ".join(
        f"`{name}`" for name in ("account_changes", "single_access_key_changes", "all_access_key_changes",
                                 "contract_code_changes", "data_changes")
    )  # fmt: skip
    for params, detail in (
        ({"block_id": 2}, "missing field `changes_type`"),
        ({"block_id": 2, "changes_type": "account_changes"}, "missing field `account_ids`"),
        (
            {"block_id": 2, "changes_type": "data_changes", "account_ids": ["a.near"]},
            "missing field `key_prefix_base64`",
        ),
        (
            {"block_id": 2, "changes_type": "single_access_key_changes", "account_ids": ["a.near"]},
            "missing field `keys`",
        ),
        ({"block_id": 2, "changes_type": "everything"}, f"unknown variant `everything`, expected one of {variants}"),
        ({"block_id": 2, "changes_type": 7}, "invalid type: integer `7`, expected variant identifier"),
        # no block reference: refused before the variant is read
        ({"changes_type": "everything"}, "no variant of enum BlockReference found in flattened data"),
        # a key as nearcore reads one (not the spec pattern's thousand characters), in the order
        # serde reads the items: the first item's bad account id is found before the second's key
        (_keys("test.near", "ed25519:abc"), "invalid key length: expected the input of 32 bytes, but 3 was given"),
        (_keys("test.near", "secp256k1:zz"), "invalid key length: expected the input of 64 bytes, but 2 was given"),
        (_keys("test.near", "rsa:" + "1" * 44), "unknown key type 'rsa'"),
        (_keys("Bad", "ed25519:abc"),
         "invalid value: \"Bad\", the Account ID contains an invalid character 'B' at index 0"),
        ({"block_id": 2, "changes_type": "account_changes", "account_ids": ["test.near", "a"]},
         'invalid value: "a", the Account ID is too short'),
    ):
        answer = _ask(http, method, params)
        assert answer.status == 400 and answer.error["cause"]["name"] == "PARSE_ERROR", params
        assert answer.error["data"] == f"Failed parsing args: {detail}"


@pytest.mark.parametrize("method", (*KINDS_METHODS, *CHANGES_METHODS))
def test_a_recording_of_chosen_accounts(chosen: tuple[httpx.Client, dict[int, str]], method: str) -> None:
    """It answers about the accounts it holds; a block's every change, or an account it does not
    hold, it cannot tell."""
    http, hashes = chosen
    if method in KINDS_METHODS:
        refused = _ask(http, method, {"block_id": 2})
        assert refused.status == 500
        assert "recording of chosen accounts" in refused.error["cause"]["info"]["error_message"]
        return
    held = _ask(http, method, {"block_id": 2, "changes_type": "account_changes", "account_ids": ["alice.near"]})
    assert [change["change"]["account_id"] for change in held.result["changes"]] == ["alice.near"]
    refused = _ask(http, method, {"block_id": 2, "changes_type": "all_access_key_changes",
                                  "account_ids": ["alice.near", "bob.near"]})  # fmt: skip
    assert refused.status == 500 and refused.error["data"] == refused.error["cause"]
    assert "holds no state of bob.near" in refused.error["cause"]["info"]["error_message"]
    assert hashes[2] not in refused.raw.decode()
