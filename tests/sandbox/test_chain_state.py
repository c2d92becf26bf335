"""The sandbox's state tools over the sample store: snapshot and revert (the whole store back, row
for row), fast_forward (across an epoch boundary), patch_state (nearcore's StateRecords), and a
block time."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import based58
import pytest

from nearrpc.sandbox.chain import MAX_FAST_FORWARD, InvalidStateRecord, producer
from tests.sandbox.chain_harness import ALICE, BOB, Sandbox, dump

NEAR = 10**24
NEW = "newcomer-sandbox.localnet"
KEY = "ed25519:" + based58.b58encode(bytes(range(32))).decode()


@pytest.fixture
def sandbox(sample_store: Path, tmp_path: Path) -> Iterator[Sandbox]:
    path = tmp_path / "sandbox.sqlite"
    shutil.copyfile(sample_store, path)
    box = Sandbox(path)
    yield box
    box.close()


def _store_dump(sandbox: Sandbox) -> bytes:
    reader = sandbox.reader()
    try:
        return dump(reader)
    finally:
        reader.close()


def _head(sandbox: Sandbox) -> dict[str, Any]:
    header: dict[str, Any] = sandbox.result("block", {"finality": "optimistic"})["header"]
    return header


def test_revert_returns_the_store_row_for_row(sandbox_on_each_backend: Sandbox) -> None:
    sandbox = sandbox_on_each_backend
    before = _store_dump(sandbox)
    head = _head(sandbox)
    snapshot = sandbox.run(sandbox.chain.snapshot())
    tx_hash = sandbox.run(sandbox.chain.submit(sandbox.transfer(NEAR)))
    sandbox.run(sandbox.chain.wait(tx_hash, "FINAL", 10.0))
    code = b"\0asm\1\0\0\0"
    sandbox.run(sandbox.chain.patch_state([{"Contract": {"account_id": NEW, "code": base64.b64encode(code).decode()}},
                                           {"Account": {"account_id": NEW, "account": {"amount": "5", "locked": "0",
                                                        "storage_usage": 100}}}]))  # fmt: skip
    sandbox.run(sandbox.chain.fast_forward(30))  # into the next epoch: a new epoch and validators record
    moved = _head(sandbox)
    assert moved["epoch_id"] != head["epoch_id"]
    assert _store_dump(sandbox) != before

    sandbox.run(sandbox.chain.revert(snapshot))
    assert _store_dump(sandbox) == before
    assert _head(sandbox) == head
    # nothing kept from the dropped blocks answers: the block by hash, the transaction
    gone = sandbox.ask("block", {"block_id": moved["hash"]})
    assert gone["error"]["cause"]["name"] == "UNKNOWN_BLOCK"
    assert "error" in sandbox.ask("tx", {"tx_hash": tx_hash, "sender_account_id": ALICE, "wait_until": "NONE"})

    # the snapshot stays: the chain goes on, and back again
    tx_hash = sandbox.run(sandbox.chain.submit(sandbox.transfer(2 * NEAR)))
    assert sandbox.run(sandbox.chain.wait(tx_hash, "FINAL", 10.0)) == "FINAL"
    sandbox.run(sandbox.chain.revert(snapshot))
    assert _store_dump(sandbox) == before
    with pytest.raises(KeyError):
        sandbox.run(sandbox.chain.revert("0x99"))


def test_a_later_snapshot_goes_with_a_revert_to_an_earlier_one(sandbox: Sandbox) -> None:
    first = sandbox.run(sandbox.chain.snapshot())
    sandbox.run(sandbox.chain.fast_forward(2))
    second = sandbox.run(sandbox.chain.snapshot())
    sandbox.run(sandbox.chain.revert(first))
    with pytest.raises(KeyError):
        sandbox.run(sandbox.chain.revert(second))


def test_fast_forward_crosses_epochs(sandbox: Sandbox) -> None:
    head = _head(sandbox)
    sandbox.run(sandbox.chain.fast_forward(60))
    moved = _head(sandbox)
    assert moved["height"] == int(str(head["height"])) + 60
    epochs = {
        sandbox.result("block", {"block_id": int(str(head["height"])) + i})["header"]["epoch_id"] for i in range(61)
    }
    assert len(epochs) == 3  # the sample's epochs last 25 heights
    # the new epochs answer as the old ones: protocol config, validators
    config = sandbox.result("EXPERIMENTAL_protocol_config", {"finality": "final"})
    assert config["epoch_length"] == 25
    validators = sandbox.result("validators", [None])
    assert validators["current_validators"]
    with pytest.raises(ValueError, match="delta_height"):
        sandbox.run(sandbox.chain.fast_forward(MAX_FAST_FORWARD + 1))


def test_a_send_during_a_fast_forward_lands_in_its_next_block(sandbox: Sandbox) -> None:
    # the transfer names the head before the fast_forward: 240 blocks later its block hash would be
    # expired (validity period 100), so it must be checked and included while the blocks are made
    start = int(str(_head(sandbox)["height"]))
    signed = sandbox.transfer(NEAR)
    reader = sandbox.reader()

    async def send_once_it_began() -> tuple[str, str]:
        while (head := reader.head()) is None or head.height == start:
            await asyncio.sleep(0.001)
        tx_hash = await sandbox.chain.submit(signed)
        return tx_hash, await sandbox.chain.wait(tx_hash, "FINAL", 30.0)

    async def both() -> tuple[str, str]:
        forward = asyncio.create_task(sandbox.chain.fast_forward(240))
        sent = await send_once_it_began()
        await forward
        return sent

    try:
        tx_hash, reached = sandbox.run(both())
    finally:
        reader.close()
    assert reached == "FINAL"
    included = sandbox.result("tx", {"tx_hash": tx_hash, "sender_account_id": ALICE})["transaction_outcome"]
    height = sandbox.result("block", {"block_id": included["block_hash"]})["header"]["height"]
    assert start < height < start + 240


def test_patch_state_writes_records_in_a_block(sandbox: Sandbox) -> None:
    code = b"\0asm\1\0\0\0"
    code_hash = based58.b58encode(hashlib.sha256(code).digest()).decode()
    head = _head(sandbox)
    records: list[dict[str, Any]] = [
        {"Account": {"account_id": NEW, "account": {"amount": "7000", "locked": "0", "storage_usage": 182}}},
        {"AccessKey": {"account_id": NEW, "public_key": KEY, "access_key": {"nonce": 3, "permission": "FullAccess"}}},
        {"Contract": {"account_id": NEW, "code": base64.b64encode(code).decode()}},
        {
            "Data": {
                "account_id": NEW,
                "data_key": base64.b64encode(b"k").decode(),
                "value": base64.b64encode(b"v").decode(),
            }
        },
        {
            "Account": {
                "account_id": BOB,
                "account": {"amount": "1", "locked": "0", "code_hash": "1" * 32, "storage_usage": 182},
            }
        },
    ]
    sandbox.run(sandbox.chain.patch_state(records))
    sandbox.run(sandbox.chain.settled())
    at = {"finality": "final"}
    account = sandbox.result("EXPERIMENTAL_view_account", {**at, "account_id": NEW})
    assert (account["amount"], account["code_hash"], account["block_height"]) == ("7000", code_hash, head["height"] + 1)
    assert sandbox.result("EXPERIMENTAL_view_account", {**at, "account_id": BOB})["amount"] == "1"
    key = sandbox.result("EXPERIMENTAL_view_access_key", {**at, "account_id": NEW, "public_key": KEY})
    assert (key["nonce"], key["permission"]) == (3, "FullAccess")
    assert base64.b64decode(sandbox.result("EXPERIMENTAL_view_code", {**at, "account_id": NEW})["code_base64"]) == code
    state = sandbox.result("EXPERIMENTAL_view_state", {**at, "account_id": NEW, "prefix_base64": ""})
    assert state["values"] == [{"key": "aw==", "value": "dg=="}]


@pytest.mark.parametrize(
    ("records", "problem"),
    [
        ([{"Receipt": {}}], "expected one of Account"),
        ([{"Account": {"account_id": "Bad!", "account": {"amount": "1"}}}], "invalid account_id"),
        ([{"Account": {"account_id": NEW, "account": {"amount": "-1"}}}], "u128"),
        ([{"AccessKey": {"account_id": NEW, "public_key": "ed25519:xx", "access_key": {}}}], "public_key"),
        ([{"Data": {"account_id": NEW, "data_key": "@@", "value": ""}}], "base64"),
        ([{"Contract": {"account_id": NEW}}], "`code` must be a string"),
    ],
)
def test_patch_state_refuses_what_it_cannot_apply(
    sandbox: Sandbox, records: list[dict[str, object]], problem: str
) -> None:
    height = _head(sandbox)["height"]
    with pytest.raises(InvalidStateRecord, match=problem):
        sandbox.run(sandbox.chain.patch_state(records))
    assert _head(sandbox)["height"] == height


def test_a_block_time_makes_blocks_empty_or_not(sample_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "timed.sqlite"
    shutil.copyfile(sample_store, path)
    box = Sandbox(path, block_time=0.02)
    try:
        start = int(str(_head(box)["height"]))
        tx_hash = box.run(box.chain.submit(box.transfer(NEAR)))
        assert box.run(box.chain.wait(tx_hash, "FINAL", 10.0)) == "FINAL"
        deadline = time.monotonic() + 5
        while int(str(_head(box)["height"])) < start + 6 and time.monotonic() < deadline:
            box.run(box.chain.wait("4" * 44, "INCLUDED", 0.05))
        assert int(str(_head(box)["height"])) >= start + 6
    finally:
        box.close()


def test_with_a_block_time_a_snapshot_settles_and_a_revert_drops_what_waits(sample_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "slow.sqlite"
    shutil.copyfile(sample_store, path)
    box = Sandbox(path, block_time=600.0)  # no block of its own during the test
    try:
        queued = box.run(box.chain.submit(box.transfer(NEAR)))
        assert box.run(box.chain.status(queued)) == "NONE"
        snapshot = box.run(box.chain.snapshot())  # makes the blocks that execute it, and make them final
        assert box.run(box.chain.wait(queued, "FINAL", 0.01)) == "FINAL"
        later = box.run(box.chain.submit(box.transfer(2 * NEAR)))
        box.run(box.chain.revert(snapshot))
        started = time.monotonic()
        assert box.run(box.chain.wait(later, "INCLUDED", 5.0)) == "NONE"
        assert time.monotonic() - started < 1.0  # dropped, not waited for
        assert box.run(box.chain.status(queued)) == "FINAL"  # before the snapshot: kept
    finally:
        box.close()


def test_a_full_queue_drops_a_transaction_as_a_full_pool_does(
    sample_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a block an hour: nothing leaves the queue, which holds MAX_QUEUED transactions at most
    monkeypatch.setattr(producer, "MAX_QUEUED", 2)
    path = tmp_path / "hourly.sqlite"
    shutil.copyfile(sample_store, path)
    box = Sandbox(path, block_time=3600)
    try:
        hashes = [box.run(box.chain.submit(box.transfer(NEAR))) for _ in range(3)]
        started = time.monotonic()
        assert box.run(box.chain.wait(hashes[2], "INCLUDED", 10.0)) == "NONE"  # dropped: answered at once
        assert time.monotonic() - started < 5
        assert [box.chain._chain().dropped(tx_hash) for tx_hash in hashes] == [False, False, True]
    finally:
        box.close()


def test_an_account_patched_with_code_the_store_lacks_answers_as_nearcore(sandbox: Sandbox) -> None:
    """A state dump's Account record comes before its Contract record: until the code comes, the
    account's code hash names code the store does not hold. nearcore answers NO_CONTRACT_CODE for
    view_code and the VM's CodeDoesNotExist for a call, never an internal error."""
    missing = based58.b58encode(hashlib.sha256(b"never patched").digest()).decode()
    account = {"amount": "1", "locked": "0", "code_hash": missing, "storage_usage": 182}
    sandbox.run(sandbox.chain.patch_state([{"Account": {"account_id": NEW, "account": account}}]))
    sandbox.run(sandbox.chain.settled())
    at = {"finality": "final", "account_id": NEW}
    call = {**at, "method_name": "get_num", "args_base64": ""}
    for method, params in [("EXPERIMENTAL_view_code", at), ("query", {**at, "request_type": "view_code"})]:
        error = sandbox.ask(method, params)["error"]
        assert (error["cause"]["name"], error["cause"]["info"]["contract_account_id"]) == ("NO_CONTRACT_CODE", NEW)
    vm_error = f'CompilationError(CodeDoesNotExist {{ account_id: AccountId("{NEW}") }})'
    answer = sandbox.result("query", {**call, "request_type": "call_function"})
    assert answer["error"] == f"wasm execution failed with error: {vm_error}"
    error = sandbox.ask("EXPERIMENTAL_call_function", call)["error"]
    assert error["cause"]["name"] == "CONTRACT_EXECUTION_ERROR"
    assert error["cause"]["info"]["vm_error"] == {"CompilationError": {"CodeDoesNotExist": {"account_id": NEW}}}
