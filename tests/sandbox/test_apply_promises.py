"""Cross-contract calls through the runtime, on hand-written WAT contracts: a call and its
callback (the callee's value, or Failed when it panics), promise_and joining two calls, a batch
with a transfer, promise_return forwarding a value, gas shared by weight; receipt ids, data ids,
the blocks each receipt runs in, refunds and the send fees the calling contract burns, computed
by hand from the fee config (runtime/runtime/src/lib.rs, receipt_manager.rs; near-vm-runner
logic.rs)."""

from __future__ import annotations

import base64
from typing import Any

import based58
import wasmtime

from nearrpc.sandbox.runtime.ids import IdMaker
from nearrpc.sandbox.runtime.model import BlockResult, DeployContract, FunctionCall
from tests.sandbox.runtime_support import FEES, GAS_PRICE, NEAR, PROTOCOL_VERSION, Chain, Signer, block_hash, fee

TGAS = 10**12
CALL_GAS = 5 * TGAS

# the callee: `echo` returns its input, `fail` panics
CALLEE = bytes(
    wasmtime.wat2wasm("""
(module
 (import "env" "input" (func $input (param i64)))
 (import "env" "value_return" (func $value_return (param i64 i64)))
 (import "env" "panic" (func $panic))
 (memory (export "memory") 1)
 (func (export "echo") (call $input (i64.const 0)) (call $value_return (i64.const -1) (i64.const 0)))
 (func (export "fail") (call $panic)))
""")
)


def caller_contract(callee: str = "callee.test", caller: str = "caller.test") -> bytes:
    """The caller; memory: "echo" 32, "callback" 40, "fail" 48, "hi" 56, "callback2" 64, zero u128
    80, 1000 as u128 96, "F" 112, promise indices [0, 1] 128, "a" 144, "b" 145, 2^127 - 1 as u128
    160, the callee's account id 300, the caller's 340, "sub." and the caller's 380, 10^24 as u128
    440, a borsh ed25519 key (type 0, bytes 1 to 32) 460."""
    to_callee = f"(i64.const {len(callee)}) (i64.const 300)"
    to_caller = f"(i64.const {len(caller)}) (i64.const 340)"
    return bytes(
        wasmtime.wat2wasm(f"""
(module
 (import "env" "promise_create" (func $create (param i64 i64 i64 i64 i64 i64 i64 i64) (result i64)))
 (import "env" "promise_then" (func $then (param i64 i64 i64 i64 i64 i64 i64 i64 i64) (result i64)))
 (import "env" "promise_and" (func $and (param i64 i64) (result i64)))
 (import "env" "promise_batch_create" (func $batch (param i64 i64) (result i64)))
 (import "env" "promise_batch_action_transfer" (func $transfer (param i64 i64)))
 (import "env" "promise_batch_action_create_account" (func $create_account (param i64)))
 (import "env" "promise_batch_action_add_key_with_full_access" (func $add_key (param i64 i64 i64 i64)))
 (import "env" "promise_batch_action_function_call_weight"
   (func $call_weight (param i64 i64 i64 i64 i64 i64 i64 i64)))
 (import "env" "promise_return" (func $return (param i64)))
 (import "env" "promise_results_count" (func $count (result i64)))
 (import "env" "promise_result" (func $result (param i64 i64) (result i64)))
 (import "env" "value_return" (func $value_return (param i64 i64)))
 (import "env" "read_register" (func $read_register (param i64 i64)))
 (import "env" "register_len" (func $register_len (param i64) (result i64)))
 (import "env" "used_gas" (func $used_gas (result i64)))
 (import "env" "promise_yield_create" (func $yield (param i64 i64 i64 i64 i64 i64 i64) (result i64)))
 (import "env" "promise_yield_resume" (func $resume (param i64 i64 i64 i64) (result i32)))
 (import "env" "storage_write" (func $storage_write (param i64 i64 i64 i64 i64) (result i64)))
 (import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))
 (memory (export "memory") 1)
 (data (i32.const 300) "{callee}")
 (data (i32.const 340) "{caller}")
 (data (i32.const 380) "sub.{caller}")
 (data (i32.const 440) "\\00\\00\\00\\a1\\ed\\cc\\ce\\1b\\c2\\d3")
 (data (i32.const 460) "\\00\\01\\02\\03\\04\\05\\06\\07\\08\\09\\0a\\0b\\0c\\0d\\0e\\0f\\10")
 (data (i32.const 477) "\\11\\12\\13\\14\\15\\16\\17\\18\\19\\1a\\1b\\1c\\1d\\1e\\1f\\20")
 (data (i32.const 32) "echo")
 (data (i32.const 40) "callback")
 (data (i32.const 48) "fail")
 (data (i32.const 56) "hi")
 (data (i32.const 64) "callback2")
 (data (i32.const 96) "\\e8\\03")
 (data (i32.const 112) "F")
 (data (i32.const 136) "\\01")
 (data (i32.const 144) "ab")
 (data (i32.const 160) "\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\7f")
 (func $echo_then (param $method i64) (param $method_len i64) (result i64)
   (call $then
     (call $create {to_callee} (local.get $method_len) (local.get $method)
       (i64.const 2) (i64.const 56) (i64.const 80) (i64.const {CALL_GAS}))
     {to_caller} (i64.const 8) (i64.const 40) (i64.const 0) (i64.const 0) (i64.const 80)
     (i64.const {CALL_GAS})))
 (func (export "call_then") (drop (call $echo_then (i64.const 32) (i64.const 4))))
 (func (export "fail_then") (drop (call $echo_then (i64.const 48) (i64.const 4))))
 (func (export "forward_then") (call $return (call $echo_then (i64.const 32) (i64.const 4))))
 (func (export "forward")
   (call $return (call $create {to_callee} (i64.const 4) (i64.const 32)
     (i64.const 2) (i64.const 56) (i64.const 80) (i64.const {CALL_GAS}))))
 (func (export "callback")
   (if (i64.ne (call $count) (i64.const 1)) (then unreachable))
   (if (i64.eq (call $result (i64.const 0) (i64.const 0)) (i64.const 1))
     (then (call $value_return (i64.const -1) (i64.const 0)))
     (else (call $value_return (i64.const 1) (i64.const 112)))))
 (func (export "and_then")
   (drop (call $create {to_callee} (i64.const 4) (i64.const 32)
     (i64.const 1) (i64.const 144) (i64.const 80) (i64.const {CALL_GAS})))
   (drop (call $create {to_callee} (i64.const 4) (i64.const 32)
     (i64.const 1) (i64.const 145) (i64.const 80) (i64.const {CALL_GAS})))
   (drop (call $then (call $and (i64.const 128) (i64.const 2))
     {to_caller} (i64.const 9) (i64.const 64) (i64.const 0) (i64.const 0) (i64.const 80)
     (i64.const {CALL_GAS}))))
 (func (export "callback2")
   (if (i64.ne (call $count) (i64.const 2)) (then unreachable))
   (drop (call $result (i64.const 0) (i64.const 0)))
   (call $read_register (i64.const 0) (i64.const 200))
   (drop (call $result (i64.const 1) (i64.const 0)))
   (call $read_register (i64.const 0) (i64.add (i64.const 200) (call $register_len (i64.const 0))))
   (call $value_return (i64.const 2) (i64.const 200)))
 (func (export "pay")
   (call $transfer (call $batch {to_callee}) (i64.const 96)))
 (func (export "weights")
   (call $call_weight (call $batch {to_callee})
     (i64.const 4) (i64.const 32) (i64.const 1) (i64.const 144) (i64.const 80) (i64.const 0) (i64.const 1))
   (call $call_weight (call $batch {to_callee})
     (i64.const 4) (i64.const 32) (i64.const 1) (i64.const 145) (i64.const 80) (i64.const {TGAS}) (i64.const 2)))
 (func (export "bad_index") (call $return (i64.const 7)))
 (func (export "bad_account") (drop (call $batch (i64.const 1) (i64.const 112))))
 (func (export "many_actions") (local $p i64) (local $n i32)
   (local.set $p (call $batch {to_callee}))
   (loop $more
     (call $transfer (local.get $p) (i64.const 80))
     (local.set $n (i32.add (local.get $n) (i32.const 1)))
     (br_if $more (i32.lt_u (local.get $n) (i32.const 101)))))
 (func (export "make_sub") (local $p i64)
   (local.set $p (call $batch (i64.const {4 + len(caller)}) (i64.const 380)))
   (call $create_account (local.get $p))
   (call $transfer (local.get $p) (i64.const 440))
   (call $add_key (local.get $p) (i64.const 33) (i64.const 460) (i64.const 0)))
 (func (export "yield")
   (call $return (call $yield (i64.const 8) (i64.const 40) (i64.const 0) (i64.const 0) (i64.const {CALL_GAS})
     (i64.const 0) (i64.const 0)))
   (drop (call $storage_write (i64.const 2) (i64.const 144) (i64.const -1) (i64.const 0) (i64.const 1))))
 (func (export "resume")
   (drop (call $storage_read (i64.const 2) (i64.const 144) (i64.const 1)))
   (i32.store8 (i32.const 400) (i32.add (i32.const 48)
     (call $resume (i64.const -1) (i64.const 1) (i64.const 2) (i64.const 56))))
   (call $value_return (i64.const 1) (i64.const 400)))
 (func (export "pay_fail")
   (drop (call $create {to_callee} (i64.const 4) (i64.const 48)
     (i64.const 0) (i64.const 56) (i64.const 96) (i64.const {CALL_GAS}))))
 (func (export "overdraw")
   (call $transfer (call $batch {to_callee}) (i64.const 160)))
 (func (export "used")
   (drop (call $create {to_callee} (i64.const 4) (i64.const 32)
     (i64.const 1) (i64.const 144) (i64.const 80) (i64.const {CALL_GAS})))
   (i64.store (i32.const 400) (call $used_gas))
   (call $value_return (i64.const 8) (i64.const 400)))
 (func (export "return_joint")
   (drop (call $create {to_callee} (i64.const 4) (i64.const 32)
     (i64.const 1) (i64.const 144) (i64.const 80) (i64.const {CALL_GAS})))
   (drop (call $create {to_callee} (i64.const 4) (i64.const 32)
     (i64.const 1) (i64.const 145) (i64.const 80) (i64.const {CALL_GAS})))
   (call $return (call $and (i64.const 128) (i64.const 2)))))
""")
    )


CALLER = caller_contract()

RECEIPT = FEES["action_receipt_creation_config"]
DATA_BASE = FEES["data_receipt_creation_config"]["base_cost"]
DATA_BYTE = FEES["data_receipt_creation_config"]["cost_per_byte"]


def _chain() -> tuple[Chain, Signer]:
    chain = Chain()
    alice, caller, callee = Signer("alice.test"), Signer("caller.test"), Signer("callee.test")
    for signer in (alice, caller, callee):
        chain.add_account(signer, 10 * NEAR)
    chain.run([caller.sign("caller.test", [DeployContract(CALLER)], chain.block_hash)])
    chain.run([callee.sign("callee.test", [DeployContract(CALLEE)], chain.block_hash)])
    return chain, alice


def _call(chain: Chain, alice: Signer, method: str, deposit: int = 0) -> list[BlockResult]:
    action = FunctionCall(method, b"", 30 * TGAS, deposit)
    return chain.run([alice.sign("caller.test", [action], chain.block_hash)])


def _ran(blocks: list[BlockResult]) -> list[tuple[int, str, dict[str, Any]]]:
    """(block index, receipt id, outcome) of every receipt executed, in order."""
    return [(index, r.receipt_id, dict(r.outcome)) for index, block in enumerate(blocks) for r in block.receipts]


def _views(blocks: list[BlockResult]) -> dict[str, Any]:
    return {r.receipt_id: r.view for block in blocks for r in block.receipts}


def _value(text: str) -> dict[str, str]:
    return {"SuccessValue": base64.b64encode(text.encode()).decode()}


def _ids(chain: Chain, block_index: int, blocks: list[BlockResult]) -> IdMaker:
    """The id maker of the block `block_index` of `blocks` (the last one is at chain.height - 1)."""
    height = chain.height - len(blocks) + block_index
    return IdMaker(block_hash(height), height, PROTOCOL_VERSION)


def _action_fee(name: str, sir: bool) -> tuple[int, int]:
    entry = FEES["action_creation_config"][name]
    return int(entry["send_sir" if sir else "send_not_sir"]), int(entry["execution"])


def test_a_call_and_its_callback_see_the_callee_value() -> None:
    chain, alice = _chain()
    blocks = _call(chain, alice, "call_then")
    ran = _ran(blocks)
    # block 1: the caller's receipt; 2: the callee's call (its callback arrives and waits);
    # 3: the data arrives and the callback runs; then the gas refunds
    first_index, first_id, first = ran[0]
    assert first_index == 1 and first["outcome"]["status"] == {"SuccessValue": ""}
    ids = _ids(chain, 1, blocks)
    call_id, callback_id, refund_id = (ids.receipt_of_receipt(first_id, index) for index in range(3))
    assert first["outcome"]["receipt_ids"] == [call_id, callback_id, refund_id]
    data_id = ids.data_id(ids.action_hash(first_id, 0), 0)
    views = _views(blocks)
    assert views[call_id]["receipt"]["Action"]["output_data_receivers"] == [
        {"data_id": data_id, "receiver_id": "caller.test"}
    ]
    assert views[callback_id]["receipt"]["Action"]["input_data_ids"] == [data_id]
    assert views[callback_id]["predecessor_id"] == "caller.test"
    by_id = {receipt_id: (index, outcome) for index, receipt_id, outcome in ran}
    assert by_id[call_id][0] == 2 and by_id[call_id][1]["outcome"]["status"] == _value("hi")
    assert by_id[callback_id][0] == 3 and by_id[callback_id][1]["outcome"]["status"] == _value("hi")
    # the callee's outcome lists its gas refund, not its data receipt (which has no outcome)
    assert len(by_id[call_id][1]["outcome"]["receipt_ids"]) == 1
    # value_return paid the data receipt's per-byte fees for its one receiver (logic.rs)
    callee_profile = {e["cost"]: int(e["gas_used"]) for e in by_id[call_id][1]["outcome"]["metadata"]["gas_profile"]}
    assert callee_profile["NEW_DATA_RECEIPT_BYTE"] == (int(DATA_BYTE["send_not_sir"]) + int(DATA_BYTE["execution"])) * 2

    # the send fees the caller burnt for its two receipts, and what they reserve
    fc_send, fc_exec = _action_fee("function_call_cost", False)
    fc_send_sir, _ = _action_fee("function_call_cost", True)
    byte_send, byte_exec = _action_fee("function_call_cost_per_byte", False)
    byte_send_sir, _ = _action_fee("function_call_cost_per_byte", True)
    data_burn = int(DATA_BASE["send_not_sir"]) + int(DATA_BASE["execution"])
    receipt_burn = int(RECEIPT["send_not_sir"]) + int(RECEIPT["send_sir"]) + data_burn
    profile = {e["cost"]: int(e["gas_used"]) for e in first["outcome"]["metadata"]["gas_profile"]}
    assert profile["NEW_ACTION_RECEIPT"] == receipt_burn
    assert profile["FUNCTION_CALL_BASE"] == fc_send + fc_send_sir
    assert profile["FUNCTION_CALL_BYTE"] == byte_send * len("echohi") + byte_send_sir * len("callback")
    reserved = 2 * int(RECEIPT["execution"]) + 2 * fc_exec + byte_exec * len("echohicallback") + 2 * CALL_GAS
    executed = (
        int(RECEIPT["execution"]) + fee("function_call_cost") + fee("function_call_cost_per_byte") * len("call_then")
    )
    burnt = first["outcome"]["gas_burnt"]
    assert sum(profile.values()) == burnt - executed
    # the unused gas comes back to alice: prepaid and exec fees, less burnt and reserved
    refund = views[refund_id]["receipt"]["Action"]["actions"][0]["Transfer"]["deposit"]
    assert int(refund) == (30 * TGAS + executed - burnt - reserved) * GAS_PRICE


def test_a_failing_callee_gives_the_callback_failed() -> None:
    chain, alice = _chain()
    blocks = _call(chain, alice, "fail_then")
    ran = _ran(blocks)
    statuses = [
        outcome["outcome"]["status"] for _, _, outcome in ran if outcome["outcome"]["executor_id"] != "alice.test"
    ]
    kind = statuses[1]["Failure"]["ActionError"]["kind"]
    assert kind == {"FunctionCallError": {"ExecutionError": "Smart contract panicked: explicit guest panic"}}
    assert statuses[2] == _value("F")  # the callback read PromiseResult::Failed (2)


def test_promise_and_gives_both_results_in_order() -> None:
    chain, alice = _chain()
    blocks = _call(chain, alice, "and_then")
    ran = _ran(blocks)
    first_id = ran[0][1]
    ids = _ids(chain, 1, blocks)
    callback_id = ids.receipt_of_receipt(first_id, 2)
    views = _views(blocks)
    action_hash = ids.action_hash(first_id, 0)
    assert views[callback_id]["receipt"]["Action"]["input_data_ids"] == [
        ids.data_id(action_hash, 0),
        ids.data_id(action_hash, 1),
    ]
    outcome = next(outcome for _, receipt_id, outcome in ran if receipt_id == callback_id)
    assert outcome["outcome"]["status"] == _value("ab")
    # the joint callback charged a data receipt base fee per receipt it waits on
    profile = {e["cost"]: int(e["gas_used"]) for e in ran[0][2]["outcome"]["metadata"]["gas_profile"]}
    data_burn = int(DATA_BASE["send_not_sir"]) + int(DATA_BASE["execution"])
    assert profile["NEW_ACTION_RECEIPT"] == 2 * int(RECEIPT["send_not_sir"]) + int(RECEIPT["send_sir"]) + 2 * data_burn


def test_promise_return_forwards_the_value() -> None:
    chain, alice = _chain()
    blocks = _call(chain, alice, "forward")
    ran = _ran(blocks)
    first_id, first = ran[0][1], ran[0][2]
    call_id = _ids(chain, 1, blocks).receipt_of_receipt(first_id, 0)
    assert first["outcome"]["status"] == {"SuccessReceiptId": call_id}
    call = next(outcome for _, receipt_id, outcome in ran if receipt_id == call_id)
    assert call["outcome"]["status"] == _value("hi")
    # the returned receipt got no output data receivers (the transaction's receipt has none)
    assert _views(blocks)[call_id]["receipt"]["Action"]["output_data_receivers"] == []


def test_promise_return_of_a_callback_hands_it_the_callers_receivers() -> None:
    chain, alice = _chain()
    blocks = _call(chain, alice, "forward_then")
    ran = _ran(blocks)
    first_id = ran[0][1]
    callback_id = _ids(chain, 1, blocks).receipt_of_receipt(first_id, 1)
    assert ran[0][2]["outcome"]["status"] == {"SuccessReceiptId": callback_id}
    callback = next(outcome for _, receipt_id, outcome in ran if receipt_id == callback_id)
    assert callback["outcome"]["status"] == _value("hi")


def test_a_batch_transfer_moves_the_callers_balance() -> None:
    chain, alice = _chain()
    before_caller = chain.state.accounts["caller.test"].amount
    before_callee = chain.state.accounts["callee.test"].amount
    blocks = _call(chain, alice, "pay")
    ran = _ran(blocks)
    transfer_send, transfer_exec = _action_fee("transfer_cost", False)
    profile = {e["cost"]: int(e["gas_used"]) for e in ran[0][2]["outcome"]["metadata"]["gas_profile"]}
    assert profile["TRANSFER"] == transfer_send
    assert ran[1][2]["outcome"]["executor_id"] == "callee.test"
    assert ran[1][2]["outcome"]["gas_burnt"] == int(RECEIPT["execution"]) + transfer_exec
    assert chain.state.accounts["callee.test"].amount == before_callee + 1000
    reward = 0  # protocol 84 pays burnt_gas_reward of the caller's contract gas
    contract_gas = ran[0][2]["outcome"]["gas_burnt"] - int(RECEIPT["execution"]) - fee("function_call_cost")
    contract_gas -= fee("function_call_cost_per_byte") * len("pay")
    numerator, denominator = (int(x) for x in FEES["burnt_gas_reward"])
    reward = contract_gas * numerator // denominator * GAS_PRICE
    assert chain.state.accounts["caller.test"].amount == before_caller - 1000 + reward


def test_unused_gas_goes_to_the_weighted_calls() -> None:
    chain, alice = _chain()
    blocks = _call(chain, alice, "weights")
    ran = _ran(blocks)
    first_id, first = ran[0][1], ran[0][2]
    ids = _ids(chain, 1, blocks)
    views = _views(blocks)
    gas = [
        int(views[ids.receipt_of_receipt(first_id, index)]["receipt"]["Action"]["actions"][0]["FunctionCall"]["gas"])
        for index in range(2)
    ]
    # everything the call did not burn or reserve is shared 1:2 (the last call takes the rest)
    executed = int(RECEIPT["execution"]) + fee("function_call_cost") + fee("function_call_cost_per_byte") * 7
    fc_exec = fee("function_call_cost")
    byte_exec = fee("function_call_cost_per_byte")
    reserved = 2 * int(RECEIPT["execution"]) + 2 * fc_exec + 2 * byte_exec * len("echoa") + TGAS
    unused = 30 * TGAS - (first["outcome"]["gas_burnt"] - executed) - reserved
    assert gas == [unused // 3, TGAS + unused - unused // 3]
    # nothing is left to refund but the receipt fees' difference (none here): no gas refund
    assert len(first["outcome"]["receipt_ids"]) == 2


def test_promise_errors_fail_the_call() -> None:
    chain, alice = _chain()
    for method, text in [
        ("bad_index", "7 does not correspond to existing promises"),
        ("overdraw", "Exceeded the account balance."),
        ("bad_account", "VM Logic returned an invalid account id"),  # "F": too short, upper case
        ("return_joint", "Returning joint promise is currently prohibited."),
    ]:
        blocks = _call(chain, alice, method)
        status = _ran(blocks)[0][2]["outcome"]["status"]
        assert status["Failure"]["ActionError"]["kind"] == {"FunctionCallError": {"ExecutionError": text}}


def test_used_gas_counts_what_promises_reserve() -> None:
    chain, alice = _chain()
    blocks = _call(chain, alice, "used")
    first = _ran(blocks)[0][2]
    used = int.from_bytes(base64.b64decode(first["outcome"]["status"]["SuccessValue"]), "little")
    fc_exec, byte_exec = fee("function_call_cost"), fee("function_call_cost_per_byte")
    reserved = int(RECEIPT["execution"]) + fc_exec + byte_exec * len("echoa") + CALL_GAS
    executed = int(RECEIPT["execution"]) + fc_exec + byte_exec * len("used")
    # logic.rs `used_gas`: burnt so far (less than the whole call burns) plus the reservation
    assert reserved < used < reserved + first["outcome"]["gas_burnt"] - executed


def test_a_failed_call_gives_its_deposit_back_to_the_calling_contract() -> None:
    chain, alice = _chain()
    blocks = _call(chain, alice, "pay_fail")
    ran = _ran(blocks)
    failed = next(outcome for _, _, outcome in ran if "Failure" in outcome["outcome"]["status"])
    assert failed["outcome"]["executor_id"] == "callee.test"
    views = _views(blocks)
    refunds = [
        (view["receiver_id"], view["receipt"]["Action"]["actions"])
        for view in views.values()
        if view["predecessor_id"] == "system" and view["receiver_id"] == "caller.test"
    ]
    # lib.rs `refund_unspent_gas_and_deposits`: the deposit to the predecessor (the caller)
    assert refunds == [("caller.test", [{"Transfer": {"deposit": "1000"}}])]


def _yielded(chain: Chain, alice: Signer) -> tuple[str, str, str]:
    """A call that yields: (its receipt id, the yield's receipt id, the yield's data id)."""
    blocks = _call(chain, alice, "yield")
    first_id, first = _ran(blocks)[0][1], _ran(blocks)[0][2]
    ids = _ids(chain, 1, blocks)
    yield_id = ids.receipt_of_receipt(first_id, 0)
    assert first["outcome"]["status"] == {"SuccessReceiptId": yield_id}
    assert first["outcome"]["receipt_ids"][0] == yield_id
    data_id = ids.data_id(ids.action_hash(first_id, 0), 0)
    # an instant receipt: kept in the block of the call that made it, with no outcome yet
    assert [receipt.view["receipt_id"] for receipt in blocks[1].waiting] == [yield_id]
    (kept,) = [receipt.view for receipt in chain.waiting]
    assert kept["receipt_id"] == yield_id
    assert kept["receipt"]["Action"]["is_promise_yield"] is True
    assert kept["receipt"]["Action"]["input_data_ids"] == [data_id]
    return first_id, yield_id, data_id


def test_a_yield_runs_with_the_payload_of_its_resume() -> None:
    chain, alice = _chain()
    _, yield_id, data_id = _yielded(chain, alice)
    blocks = _call(chain, alice, "resume")
    ran = _ran(blocks)
    assert ran[0][2]["outcome"]["status"] == _value("1")  # promise_yield_resume answered 1
    resume_id = _ids(chain, 1, blocks).receipt_of_receipt(ran[0][1], 0)
    resumed = next(outcome for _, receipt_id, outcome in ran if receipt_id == yield_id)
    assert resumed["outcome"]["status"] == _value("hi")  # the callback read the payload
    assert resume_id not in ran[0][2]["outcome"]["receipt_ids"]  # a data receipt: no outcome
    assert chain.waiting == []
    # a second resume finds no yield waiting
    assert _ran(_call(chain, alice, "resume"))[0][2]["outcome"]["status"] == _value("0")
    assert data_id


def test_a_yield_not_resumed_times_out_as_failed() -> None:
    chain, alice = _chain()
    _, yield_id, data_id = _yielded(chain, alice)
    created = chain.height - 2  # the call that yielded ran two blocks before the last one made
    timeout = int(chain.config["wasm_config"]["limit_config"]["yield_timeout_length_in_blocks"])
    while chain.height <= created + timeout:
        assert not chain.block().receipts  # nothing runs while the yield waits
    # the block at created + timeout sent a resume without data; the next one runs the yield
    (resume,) = chain.pending
    expected_id = IdMaker(block_hash(created + timeout), created + timeout, PROTOCOL_VERSION).receipt_of_receipt(
        data_id, 0
    )
    assert resume.view["receipt_id"] == expected_id
    assert resume.view["receipt"] == {"Data": {"data_id": data_id, "data": None, "is_promise_resume": True}}
    ran = _ran([chain.block()])
    assert ran[0][1] == yield_id and ran[0][2]["outcome"]["status"] == _value("F")


def test_a_batch_creates_a_sub_account_with_a_key() -> None:
    chain, alice = _chain()
    before = chain.state.accounts["caller.test"].amount
    blocks = _call(chain, alice, "make_sub")
    ran = _ran(blocks)
    made = next(outcome for _, _, outcome in ran if outcome["outcome"]["executor_id"] == "sub.caller.test")
    assert made["outcome"]["status"] == {"SuccessValue": ""}
    key = "ed25519:" + based58.b58encode(bytes(range(1, 33))).decode()
    assert chain.state.accounts["sub.caller.test"].amount == NEAR
    assert ("sub.caller.test", key) in chain.state.keys
    # the send fees burnt by the caller, each action's own
    create_send, _ = _action_fee("create_account_cost", False)
    key_send = int(FEES["action_creation_config"]["add_key_cost"]["full_access_cost"]["send_not_sir"])
    profile = {e["cost"]: int(e["gas_used"]) for e in ran[0][2]["outcome"]["metadata"]["gas_profile"]}
    assert profile["CREATE_ACCOUNT"] == create_send and profile["ADD_FULL_ACCESS_KEY"] == key_send
    # the deposit left the caller (its contract reward, a fraction of its gas, came back)
    assert before - NEAR < chain.state.accounts["caller.test"].amount < before - NEAR + NEAR // 1000


def test_a_new_receipt_past_the_action_limit_fails_its_call() -> None:
    chain, alice = _chain()
    blocks = _call(chain, alice, "many_actions")
    first = _ran(blocks)[0][2]
    limit = int(chain.config["wasm_config"]["limit_config"]["max_actions_per_receipt"])
    # lib.rs `apply_action_receipt`: the receipt the call made is validated (NewReceipt mode)
    exceeded = {"TotalNumberOfActionsExceeded": {"total_number_of_actions": 101, "limit": limit}}
    assert first["outcome"]["status"]["Failure"]["ActionError"] == {
        "index": 0,
        "kind": {"NewReceiptValidationError": {"ActionsValidation": exceeded}},
    }
    assert first["outcome"]["receipt_ids"] == [ran for _, ran, _ in _ran(blocks)[1:]]  # the gas refund alone


def test_a_host_function_of_a_feature_the_sandbox_lacks_fails_the_call_clearly() -> None:
    """promise_set_refund_to (refund targets) runs nowhere here: the call fails with the
    documented ExecutionError (spec/DEVIATIONS.md), its deposit back to its signer."""
    chain = Chain()
    contract, alice = Signer("refunds.test"), Signer("alice.test")
    chain.add_account(contract, 10 * NEAR)
    chain.add_account(alice, 10 * NEAR)
    code = bytes(
        wasmtime.wat2wasm("""
(module
 (import "env" "promise_batch_create" (func $batch (param i64 i64) (result i64)))
 (import "env" "promise_set_refund_to" (func $refund_to (param i64 i64 i64)))
 (memory (export "memory") 1)
 (data (i32.const 0) "alice.test")
 (func (export "go") (call $refund_to (call $batch (i64.const 10) (i64.const 0)) (i64.const 10) (i64.const 0))))
""")
    )
    chain.run([contract.sign("refunds.test", [DeployContract(code)], chain.block_hash)])
    blocks = chain.run([alice.sign("refunds.test", [FunctionCall("go", b"", 10 * TGAS, 5)], chain.block_hash)])
    status = _ran(blocks)[0][2]["outcome"]["status"]
    assert status["Failure"]["ActionError"]["kind"] == {
        "FunctionCallError": {
            "ExecutionError": "promise_set_refund_to is not available: nearrpc's sandbox does not run this "
            "promise host function yet"
        }
    }
    refunds = [r.view for block in blocks for r in block.receipts if r.view["predecessor_id"] == "system"]
    deposits = [a["Transfer"]["deposit"] for v in refunds for a in v["receipt"]["Action"]["actions"]]
    assert "5" in deposits  # the failed call's deposit, back to alice
