"""Two rules of a block's changes derived from its rows (the in-memory reader of
test_changes_derivation.py):
- access keys are listed in nearcore's trie order: the trie key of an access key ends with the
  borsh PublicKey, its key type byte, then its bytes (core primitives trie_key.rs
  `TrieKey::AccessKey`), so two ed25519 keys sort by their bytes, whatever their base58 text;
- a code hash that turns to none while the account stays (its ContractCode trie key removed) is
  a contract code deletion, as nearcore records every write of the ContractCode key.
"""

from __future__ import annotations

import base58
import orjson

from nearrpc.methods.changes import changes_result, kinds_result
from tests.methods.test_changes_derivation import CODE_HASH, Reader, _account, _key, _rows

# bytes 0x02.. sort before 0x10.., their base58 texts the other way round
LOW = "ed25519:" + base58.b58encode(b"\x02" + bytes(31)).decode()
HIGH = "ed25519:" + base58.b58encode(b"\x10" + bytes(31)).decode()


def test_access_key_changes_are_in_key_byte_order_not_text_order() -> None:
    assert LOW > HIGH  # as text
    reader = Reader()
    reader.states = {("alice.near", 5): _account(100)}
    reader.keys[6] = [("alice.near", HIGH, _key(1)), ("alice.near", LOW, _key(2))]
    rows = _rows(reader)
    request = {"changes_type": "all_access_key_changes", "account_ids": ["alice.near"]}
    changes = orjson.loads(changes_result(rows, request))["changes"]
    assert [change["change"]["public_key"] for change in changes] == [LOW, HIGH]


def test_a_code_hash_that_turns_to_none_is_a_code_deletion() -> None:
    reader = Reader()
    reader.states = {("dave.near", 5): _account(5, CODE_HASH)}
    reader.accounts[6] = [("dave.near", _account(5))]  # the account stays, its code is gone
    rows = _rows(reader)
    touched = orjson.loads(kinds_result(rows))["changes"]
    assert {"type": "contract_code_touched", "account_id": "dave.near"} in touched
    request = {"changes_type": "contract_code_changes", "account_ids": ["dave.near"]}
    changes = orjson.loads(changes_result(rows, request))["changes"]
    assert [(change["type"], change["change"]) for change in changes] == [
        ("contract_code_deletion", {"account_id": "dave.near"})
    ]
