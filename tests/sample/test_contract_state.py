"""The sample chain's contract state: the rows the counter calls and token transfers write, read
by the contracts themselves (raw Wasmtime, tests/support/wasm_host.py), and the contract accounts'
storage_usage kept equal to what nearcore counts for their code and records."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import orjson

from nearrpc.sample import SampleChain, wasm
from tests.support.sample_facts import SampleFacts
from tests.support.wasm_host import call

# nearcore's runtime config: num_extra_bytes_record, added to each data record's key and value
EXTRA_BYTES_PER_RECORD = 40


def _state(facts: SampleFacts, account_id: str, height: int) -> dict[bytes, bytes]:
    state: dict[bytes, bytes | None] = {}
    for row in facts.contract_data:
        if row.account_id == account_id and row.height <= height:
            state[row.key] = row.value
    return {key: value for key, value in state.items() if value is not None}


def _balance_of(facts: SampleFacts, account_id: str, height: int) -> Any:
    args = orjson.dumps({"account_id": account_id})
    result = call(wasm.FT.code, "ft_balance_of", args, _state(facts, facts.token_account, height)).result
    assert result is not None
    return orjson.loads(result)


def test_rows_sit_at_block_heights_in_order(facts: SampleFacts) -> None:
    keys = [(row.height, row.account_id, row.key) for row in facts.contract_data]
    assert keys == sorted(set(keys))
    assert {row.height for row in facts.contract_data} <= set(facts.block_heights)
    assert {row.account_id for row in facts.contract_data} == {facts.contract_account, facts.token_account}


def test_get_num_answers_differently_across_heights(facts: SampleFacts) -> None:
    heights = facts.contract_change_heights(facts.contract_account, b"STATE")
    assert len(heights) > 5 and heights[0] > facts.genesis_height  # no state until the first call

    def get_num(height: int) -> int:
        result = call(wasm.COUNTER.code, "get_num", state=_state(facts, facts.contract_account, height)).result
        assert result is not None
        return int(result)

    answers = [get_num(height) for height in heights]
    assert get_num(facts.genesis_height) == 0
    assert all(a != b for a, b in pairwise(answers))  # every call changes the count
    assert {b - a for a, b in pairwise([0, *answers])} == {1, -1}  # increments and decrements
    stored = facts.contract_value(facts.contract_account, b"STATE", heights[-1])
    assert stored is not None and int.from_bytes(stored, "little", signed=True) == answers[-1]


def test_token_balances_move_and_the_supply_stays(facts: SampleFacts) -> None:
    heights = sorted({row.height for row in facts.contract_data if row.account_id == facts.token_account})
    assert heights[0] == facts.genesis_height and len(heights) > 3
    supply = call(wasm.FT.code, "ft_total_supply", state=_state(facts, facts.token_account, facts.head_height)).result
    assert supply is not None
    for height in heights:
        state = _state(facts, facts.token_account, height)
        balances = sum(int.from_bytes(v, "little") for k, v in state.items() if k.startswith(b"b"))
        assert str(balances).encode() == orjson.loads(supply).encode()
        assert call(wasm.FT.code, "ft_total_supply", state=state).result == supply
    # a balance beyond 2^64 that changes: the same call at two heights answers two values
    holder = max(
        (row.key[1:].decode() for row in facts.contract_data if row.key.startswith(b"b") and row.height > 0),
        key=lambda a: int(_balance_of(facts, a, facts.genesis_height)),
    )
    before, after = _balance_of(facts, holder, facts.genesis_height), _balance_of(facts, holder, facts.head_height)
    assert int(before) > 2**64 and before != after


def test_a_removed_balance_reads_as_zero(facts: SampleFacts) -> None:
    removed = [row for row in facts.contract_data if row.value is None]
    assert len(removed) == 1 and removed[0].account_id == facts.token_account
    account_id, height = removed[0].key[1:].decode(), removed[0].height
    changes = facts.contract_change_heights(facts.token_account, removed[0].key)
    assert changes[0] > facts.genesis_height  # a holder since a transfer, then unregistered
    assert _balance_of(facts, account_id, facts.genesis_height) == "0"
    assert int(_balance_of(facts, account_id, changes[0])) > 0
    assert _balance_of(facts, account_id, height - 1) == "0"  # its tokens moved on before it left
    assert facts.contract_value(facts.token_account, removed[0].key, height) is None


def test_storage_usage_counts_code_and_records(facts: SampleFacts, chain: SampleChain) -> None:
    treasury = [r.view_json for r in chain.account_states if r.account_id == facts.treasury_account]
    plain = orjson.loads(treasury[0] or b"")
    codes = dict(chain.contract_codes)
    for account_id in (facts.contract_account, facts.token_account):
        rows = [r for r in chain.account_states if r.account_id == account_id]
        # at every height where the account's view or its records changed, the view in force
        # counts the code and the records in force
        heights = {r.height for r in rows} | {r.height for r in facts.contract_data if r.account_id == account_id}
        for height in sorted(heights):
            view_json = [r.view_json for r in rows if r.height <= height][-1]
            assert view_json is not None
            view = orjson.loads(view_json)
            records = _state(facts, account_id, height)
            used = sum(len(k) + len(v) + EXTRA_BYTES_PER_RECORD for k, v in records.items())
            assert view["storage_usage"] == plain["storage_usage"] + len(codes[view["code_hash"]]) + used, height


def test_the_contract_accounts_run_the_built_contracts(facts: SampleFacts, chain: SampleChain) -> None:
    codes = dict(chain.contract_codes)
    assert codes[facts.contract_code_hash] == wasm.COUNTER.code
    assert codes[facts.token_code_hash] == wasm.FT.code


def test_the_store_holds_the_rows(facts: SampleFacts, reader: Any) -> None:
    """The sample store answers each contract key at the heights around each change as the
    generated rows say, and lists a contract's state as of a height."""
    for row in facts.contract_data:
        for height in (row.height - 1, row.height, facts.head_height):
            if height >= facts.genesis_height:
                assert reader.contract_value(row.account_id, row.key, height) == facts.contract_value(
                    row.account_id, row.key, height
                )
    for height in (facts.genesis_height, 50, facts.head_height):
        expected = sorted(_state(facts, facts.token_account, height).items())
        assert reader.contract_state(facts.token_account, b"", height, 100) == expected
        assert reader.contract_state(facts.token_account, b"b", height, 100) == [kv for kv in expected if kv[0] != b"t"]
    assert sum(1 for _ in reader.iter_contract_data()) == len(facts.contract_data)
