"""The state changes of a block derived from its rows, over an in-memory reader: every kind of
change and cause, nearcore's order, and the blocks whose changes the rows cannot tell. The
methods over a real server and store: tests/methods/test_changes_methods.py."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import orjson
import pytest

from nearrpc.methods.changes import BlockRows, ChangesNotKnown, changes_result, kinds_result, read_block_rows
from nearrpc.nearcore.views import ZERO_HASH
from nearrpc.store import StoredBlock, StoredReceipt, StoredTransaction

CODE = b"\x00asm\x01\x00\x00\x00"
CODE_HASH = "CodeHash1111111111111111111111111111111111111"
ALICE_KEY = "ed25519:6E8sCci9badyRkXb3JoRpBj5p8C6Tw41ELDZoiihKEtp"
BOB_KEY = "ed25519:8Ru9dvgqbSiqfAjLDAbRBdRMnLWCzRSNWcFRDQS6hVqU"
CAROL_KEY = "ed25519:3NGmQxJzLpAVj6MrHQcbF3vwz1jNBXA8jYsHu7FWCMgk"


def _block(height: int, block_hash: str, prev_hash: str, epoch_id: str = "E1") -> StoredBlock:
    return StoredBlock(height, block_hash, prev_hash, epoch_id, prev_hash, prev_hash, b"{}")


GENESIS = _block(0, "G", ZERO_HASH, ZERO_HASH)
PARENT = _block(5, "P", "G")
BLOCK = _block(6, "B", "P")


def _account(amount: int, code_hash: str = ZERO_HASH) -> bytes:
    view = {"amount": str(amount), "locked": "0", "code_hash": code_hash, "storage_usage": 100, "storage_paid_at": 0}
    return orjson.dumps(view)


def _key(nonce: int) -> bytes:
    return orjson.dumps({"nonce": nonce, "permission": "FullAccess"})


def _transaction(tx_hash: str, signer: str, key: str) -> StoredTransaction:
    view = {
        "transaction": {
            "signer_id": signer,
            "public_key": key,
            "nonce": 7,
            "receiver_id": "bob.near",
            "actions": [{"Transfer": {"deposit": "1"}}],
            "hash": tx_hash,
        }
    }
    return StoredTransaction(tx_hash, signer, "B", 6, 0, orjson.dumps(view))


def _receipt(
    receipt_id: str,
    receiver: str,
    actions: list[Any],
    *,
    failed: bool = False,
    predecessor: str = "alice.near",
    signer_key: str = ALICE_KEY,
) -> StoredReceipt:
    view = {
        "predecessor_id": predecessor,
        "receiver_id": receiver,
        "receipt_id": receipt_id,
        "receipt": {
            "Action": {
                "signer_id": "alice.near",
                "signer_public_key": signer_key,
                "gas_price": "1",
                "output_data_receivers": [],
                "input_data_ids": [],
                "actions": actions,
            }
        },
    }
    status: dict[str, Any] = {"Failure": {"ActionError": {}}} if failed else {"SuccessValue": ""}
    outcome = {"id": receipt_id, "outcome": {"status": status}}
    return StoredReceipt(receipt_id, "B", 6, 0, orjson.dumps(view), orjson.dumps(outcome))


class Reader:
    """The lookups the changes read, over dicts; the rest of ServingReader is not asked."""

    def __init__(self) -> None:
        self.blocks = {block.hash: block for block in (GENESIS, PARENT, BLOCK)}
        self.accounts: dict[int, list[tuple[str, bytes | None]]] = {}
        self.keys: dict[int, list[tuple[str, str, bytes | None]]] = {}
        self.data: dict[int, list[tuple[str, bytes, bytes | None]]] = {}
        self.states: dict[tuple[str, int], bytes] = {}
        self.codes = {CODE_HASH: CODE}
        self.transactions: list[StoredTransaction] = []
        self.receipts: list[StoredReceipt] = []
        self.kept: dict[str, bytes] = {}  # a sandbox's records of its blocks' changes

    async def genesis_block(self) -> StoredBlock | None:
        return self.blocks.get("G")

    async def block_by_height(self, height: int) -> StoredBlock | None:
        return next((block for block in self.blocks.values() if block.height == height), None)

    async def block_by_hash(self, block_hash: str) -> StoredBlock | None:
        return self.blocks.get(block_hash)

    async def account_changes(self, height: int) -> list[tuple[str, bytes | None]]:
        return self.accounts.get(height, [])

    async def access_key_changes(self, height: int) -> list[tuple[str, str, bytes | None]]:
        return self.keys.get(height, [])

    async def contract_data_changes(self, height: int) -> list[tuple[str, bytes, bytes | None]]:
        return self.data.get(height, [])

    async def account_json(self, account_id: str, height: int) -> bytes | None:
        return self.states.get((account_id, height))

    async def contract_code(self, code_hash: str) -> bytes | None:
        return self.codes.get(code_hash)

    async def transactions_at(self, height: int) -> list[StoredTransaction]:
        return [tx for tx in self.transactions if tx.height == height]

    async def receipts_executed_at(self, height: int) -> list[StoredReceipt]:
        return [receipt for receipt in self.receipts if receipt.height == height]

    async def kept_answer(self, key: str) -> bytes | None:
        return self.kept.get(key)


def _rows(reader: Reader, block: StoredBlock = BLOCK) -> BlockRows:
    return asyncio.run(read_block_rows(reader, block))  # type: ignore[arg-type]


def _cause(rows: BlockRows, kind: str, account_id: str, public_key: str = "") -> Any:
    """The cause of the one change a row gives its key (the first such key: contract data)."""
    key = next(key for key in rows.keys if (key.kind, key.account_id, key.key) == (kind, account_id, public_key))
    (change,) = key.changes
    return change["cause"]


@pytest.fixture
def busy() -> Reader:
    """Block 6 changes every kind of row: a transfer signed by alice to bob, bob's new key,
    carol's account deleted, dave's contract deployed, and a call writing contract.near's data."""
    reader = Reader()
    reader.states = {
        ("alice.near", 5): _account(100),
        ("bob.near", 5): _account(10),
        ("carol.near", 5): _account(5),
        ("dave.near", 5): _account(5),
        ("contract.near", 5): _account(50, CODE_HASH),
    }
    reader.accounts[6] = [
        ("dave.near", _account(4, CODE_HASH)),
        ("alice.near", _account(90)),
        ("bob.near", _account(20)),
        ("carol.near", None),
        ("contract.near", _account(51, CODE_HASH)),
    ]
    # bob's new key sorts before alice's (key bytes), but accounts come first
    reader.keys[6] = [
        ("bob.near", BOB_KEY, _key(0)),
        ("alice.near", ALICE_KEY, _key(8)),
        ("carol.near", CAROL_KEY, None),
    ]
    reader.data[6] = [("contract.near", b"old", None), ("contract.near", b"STATE", b"\x01")]
    reader.transactions = [_transaction("T1", "alice.near", ALICE_KEY)]
    reader.receipts = [
        _receipt(
            "R1",
            "bob.near",
            [
                {"Transfer": {"deposit": "10"}},
                {"AddKey": {"public_key": BOB_KEY, "access_key": {"nonce": 0, "permission": "FullAccess"}}},
            ],
        ),
        _receipt("R2", "carol.near", [{"DeleteAccount": {"beneficiary_id": "alice.near"}}]),
        _receipt("R3", "dave.near", [{"DeployContract": {"code": "aGFzaA=="}}]),
        _receipt(
            "R4", "contract.near", [{"FunctionCall": {"method_name": "set", "args": "", "gas": 1, "deposit": "0"}}]
        ),
    ]
    return reader


def _changes(rows: BlockRows, **request: Any) -> list[dict[str, Any]]:
    answer = orjson.loads(changes_result(rows, request))
    assert answer["block_hash"] == rows.block_hash
    changes: list[dict[str, Any]] = answer["changes"]
    return changes


def test_every_changed_row_is_touched_in_trie_order(busy: Reader) -> None:
    answer = orjson.loads(kinds_result(_rows(busy)))
    assert answer == {
        "block_hash": "B",
        "changes": [
            {"type": "account_touched", "account_id": "alice.near"},
            {"type": "account_touched", "account_id": "bob.near"},
            {"type": "account_touched", "account_id": "carol.near"},
            {"type": "account_touched", "account_id": "contract.near"},
            {"type": "account_touched", "account_id": "dave.near"},
            {"type": "contract_code_touched", "account_id": "carol.near"},  # every deleted account's code key
            {"type": "contract_code_touched", "account_id": "dave.near"},
            {"type": "access_key_touched", "account_id": "alice.near"},
            {"type": "access_key_touched", "account_id": "bob.near"},
            {"type": "access_key_touched", "account_id": "carol.near"},
            {"type": "data_touched", "account_id": "contract.near"},  # b"STATE" < b"old"
            {"type": "data_touched", "account_id": "contract.near"},
        ],
    }


def test_account_changes_carry_the_view_and_their_causes(busy: Reader) -> None:
    rows = _rows(busy)
    changes = _changes(
        rows,
        changes_type="account_changes",
        account_ids=["contract.near", "alice.near", "carol.near", "nobody.near", "alice.near"],
    )
    alice = {
        "cause": {"type": "transaction_processing", "tx_hash": "T1"},
        "type": "account_update",
        "change": {"account_id": "alice.near", **orjson.loads(_account(90))},
    }
    assert changes == [
        {
            "cause": {"type": "action_receipt_gas_reward", "receipt_hash": "R4"},
            "type": "account_update",
            "change": {"account_id": "contract.near", **orjson.loads(_account(51, CODE_HASH))},
        },
        alice,
        {
            "cause": {"type": "receipt_processing", "receipt_hash": "R2"},
            "type": "account_deletion",
            "change": {"account_id": "carol.near"},
        },
        alice,  # asked twice, answered twice, as nearcore does
    ]
    assert list(changes[1]) == ["cause", "type", "change"]
    assert list(changes[1]["change"])[:2] == ["account_id", "amount"]


def test_access_key_changes_all_and_single(busy: Reader) -> None:
    rows = _rows(busy)
    all_keys = _changes(rows, changes_type="all_access_key_changes", account_ids=["bob.near", "carol.near"])
    assert all_keys == [
        {
            "cause": {"type": "receipt_processing", "receipt_hash": "R1"},
            "type": "access_key_update",
            "change": {"account_id": "bob.near", "public_key": BOB_KEY, "access_key": orjson.loads(_key(0))},
        },
        {
            "cause": {"type": "receipt_processing", "receipt_hash": "R2"},
            "type": "access_key_deletion",
            "change": {"account_id": "carol.near", "public_key": CAROL_KEY},
        },
    ]
    bare_key = ALICE_KEY.removeprefix("ed25519:")  # a key without its type is an ed25519 key
    single = _changes(
        rows,
        changes_type="single_access_key_changes",
        keys=[
            {"account_id": "alice.near", "public_key": bare_key},
            {"account_id": "alice.near", "public_key": BOB_KEY},
        ],
    )
    assert single == [
        {
            "cause": {"type": "transaction_processing", "tx_hash": "T1"},
            "type": "access_key_update",
            "change": {"account_id": "alice.near", "public_key": ALICE_KEY, "access_key": orjson.loads(_key(8))},
        },
    ]


def test_code_changes_from_the_moved_code_hash(busy: Reader) -> None:
    changes = _changes(
        _rows(busy), changes_type="contract_code_changes", account_ids=["dave.near", "carol.near", "contract.near"]
    )
    assert changes == [
        {
            "cause": {"type": "receipt_processing", "receipt_hash": "R3"},
            "type": "contract_code_update",
            "change": {"account_id": "dave.near", "code_base64": base64.b64encode(CODE).decode()},
        },
        {
            "cause": {"type": "receipt_processing", "receipt_hash": "R2"},
            "type": "contract_code_deletion",
            "change": {"account_id": "carol.near"},
        },
    ]


def test_data_changes_by_prefix(busy: Reader) -> None:
    rows = _rows(busy)
    every = _changes(rows, changes_type="data_changes", account_ids=["contract.near"], key_prefix_base64="")
    cause = {"type": "receipt_processing", "receipt_hash": "R4"}
    assert every == [
        {
            "cause": cause,
            "type": "data_update",
            "change": {"account_id": "contract.near", "key_base64": "U1RBVEU=", "value_base64": "AQ=="},
        },
        {"cause": cause, "type": "data_deletion", "change": {"account_id": "contract.near", "key_base64": "b2xk"}},
    ]
    prefixed = _changes(
        rows,
        changes_type="data_changes",
        account_ids=["contract.near"],
        key_prefix_base64=base64.b64encode(b"ol").decode(),
    )
    assert prefixed == every[1:]


def test_a_failed_receipt_writes_nothing_but_its_gas_reward(busy: Reader) -> None:
    busy.receipts.append(
        _receipt(
            "R5",
            "bob.near",
            [{"AddKey": {"public_key": BOB_KEY, "access_key": {"nonce": 0, "permission": "FullAccess"}}}],
            failed=True,
        )
    )
    busy.receipts.append(
        _receipt(
            "R6",
            "contract.near",
            [{"FunctionCall": {"method_name": "x", "args": "", "gas": 1, "deposit": "0"}}],
            failed=True,
        )
    )
    rows = _rows(busy)
    assert _cause(rows, "access_key", "bob.near", BOB_KEY) == {"type": "receipt_processing", "receipt_hash": "R1"}
    assert _cause(rows, "account", "contract.near") == {"type": "action_receipt_gas_reward", "receipt_hash": "R6"}
    assert _cause(rows, "data", "contract.near") == {"type": "receipt_processing", "receipt_hash": "R4"}


def test_a_refund_returns_the_signing_key_allowance(busy: Reader) -> None:
    busy.receipts.append(_receipt("R7", "alice.near", [{"Transfer": {"deposit": "3"}}], predecessor="system"))
    rows = _rows(busy)
    assert _cause(rows, "access_key", "alice.near", ALICE_KEY) == {"type": "receipt_processing", "receipt_hash": "R7"}
    assert _cause(rows, "account", "alice.near") == {"type": "receipt_processing", "receipt_hash": "R7"}


def test_causes_the_store_does_not_know() -> None:
    reader = Reader()
    reader.accounts[6] = [("validator.near", _account(7))]
    unknown = _changes(_rows(reader), changes_type="account_changes", account_ids=["validator.near"])
    assert [change["cause"] for change in unknown] == [{"type": "not_writable_to_disk"}]
    reader.blocks["B"] = _block(6, "B", "P", epoch_id="E2")  # the first block of an epoch
    rewarded = _changes(
        _rows(reader, reader.blocks["B"]), changes_type="account_changes", account_ids=["validator.near"]
    )
    assert [change["cause"] for change in rewarded] == [{"type": "validator_accounts_update"}]


def test_the_genesis_block_has_no_changes(busy: Reader) -> None:
    busy.accounts[0] = [("alice.near", _account(100))]  # the initial state, not a change
    rows = _rows(busy, GENESIS)
    assert orjson.loads(kinds_result(rows)) == {"block_hash": "G", "changes": []}
    assert _changes(rows, changes_type="account_changes", account_ids=["alice.near"]) == []


def test_blocks_whose_rows_are_not_their_changes(busy: Reader) -> None:
    del busy.blocks["P"]
    with pytest.raises(ChangesNotKnown, match="does not hold block P, the parent of block B"):
        _rows(busy)
    busy.blocks["P"] = PARENT
    busy.blocks["F"] = _block(6, "F", "P")  # a fork beside the canonical block B
    with pytest.raises(ChangesNotKnown, match="block F is not on the canonical chain"):
        _rows(busy, busy.blocks["F"])
    busy.codes.clear()
    with pytest.raises(ChangesNotKnown, match=f"no contract code with hash {CODE_HASH}"):
        _rows(busy)
