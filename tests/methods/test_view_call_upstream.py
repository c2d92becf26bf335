"""The handlers' CallUpstream hook (what a fork provides), over a real SQLite store of the sample
chain plus one contract that imports a host function the executor does not implement (a curve
operation) and one that reads the epoch's validators' stakes:
- without an upstream, that call is a failed call (the VM's WasmUnknownError naming the
  function), never an internal error;
- the validators' stakes are the stored validators record's, answered locally;
- with one, the upstream's answer verbatim, counted as path "upstream";
- with a verifier (the fork's `--verify-calls`, over the same upstream), every local answer is
  compared with the upstream's: a same answer counts nothing, a different one is counted and
  logged, and the local answer stands.
The fork's own CallUpstream (over its upstream client) is tested with the fork.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
from pathlib import Path
from typing import Any

import base58
import orjson
import pytest
import wasmtime

from nearrpc.fork.calls import CallAnswer
from nearrpc.fork.verify import UpstreamVerifier
from nearrpc.generated.methods import METHODS
from nearrpc.methods.errors import RpcError
from nearrpc.methods.handlers import ChainHandlers
from nearrpc.methods.params import typed_params
from nearrpc.methods.view_calls import ViewCallMetrics
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.sample import sample_chain
from nearrpc.store import StoredBlock, open_store
from tests.support.sample_facts import sample_facts

FACTS = sample_facts()
STAKE = "stake.localnet"
STAKE_WAT = """(module (import "env" "alt_bn128_g1_sum" (func $sum (param i64 i64 i64)))
  (memory (export "memory") 1) (func (export "total") (call $sum (i64.const 0) (i64.const 0) (i64.const 0))))"""
VALIDATORS = "validators.localnet"
VALIDATORS_WAT = """(module
  (import "env" "validator_total_stake" (func $total (param i64)))
  (import "env" "validator_stake" (func $stake (param i64 i64 i64)))
  (import "env" "input" (func $input (param i64)))
  (import "env" "register_len" (func $register_len (param i64) (result i64)))
  (import "env" "read_register" (func $read_register (param i64 i64)))
  (import "env" "value_return" (func $value_return (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "total") (call $total (i64.const 0)) (call $value_return (i64.const 16) (i64.const 0)))
  (func (export "stake_of") (call $input (i64.const 0)) (call $read_register (i64.const 0) (i64.const 100))
    (call $stake (call $register_len (i64.const 0)) (i64.const 100) (i64.const 0))
    (call $value_return (i64.const 16) (i64.const 0))))"""


class StubUpstream:
    """An upstream that answers every call with `answer`, and remembers what it was asked."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str, bytes, int]] = []

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> bytes:
        self.asked.append((account_id, method_name, args, block.height))
        return self.answer


class StubFork:
    """`upstream` as the fork's verifier asks it (ForkReader.call_function: a CallAnswer)."""

    def __init__(self, upstream: StubUpstream) -> None:
        self.upstream = upstream

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> CallAnswer:
        return CallAnswer(await self.upstream.call_function(account_id, method_name, args, block), None)


def _verifying(upstream: StubUpstream) -> dict[str, Any]:
    """The handlers' options of a fork with --verify-calls over `upstream`."""
    return {"call_upstream": upstream, "call_verifier": UpstreamVerifier(StubFork(upstream))}


@pytest.fixture(scope="module")
def store(sample_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("upstream") / "store.sqlite"
    path.write_bytes(sample_store.read_bytes())
    counter = [row for row in sample_chain().account_states if row.account_id == FACTS.contract_account]
    with open_store(path, "write") as writer, writer.batch() as batch:
        for account_id, wat in ((STAKE, STAKE_WAT), (VALIDATORS, VALIDATORS_WAT)):
            code = bytes(wasmtime.wat2wasm(wat))
            code_hash = base58.b58encode(hashlib.sha256(code).digest()).decode()
            view = {**orjson.loads(counter[-1].view_json or b"{}"), "code_hash": code_hash}
            batch.put_contract_code(code_hash, code)
            batch.put_account_state(account_id, FACTS.head_height, orjson.dumps(view))
    return path


def _ask(store: Path, method: str, params: Any, **options: Any) -> tuple[bytes | RpcError, list[str]]:
    """One answer of fresh handlers over `store`, and the counts they reported."""
    counted: list[str] = []
    metrics = ViewCallMetrics(lambda path, reason: counted.append(f"{path}/{reason}"),
                              lambda: counted.append("difference"))  # fmt: skip

    async def answer() -> bytes | RpcError:
        reader = open_store(store, "serve")
        handlers = ChainHandlers(reader, RuntimeParamStore.load(), view_call_metrics=metrics, **options)
        handlers.refresh()
        try:
            result: bytes = await getattr(handlers, METHODS[method].identifier)(typed_params(METHODS[method], params))
            return result
        except RpcError as error:
            return error
        finally:
            await reader.close()

    return asyncio.run(answer()), counted


def _call(account_id: str, method_name: str) -> dict[str, Any]:
    return {"request_type": "call_function", "account_id": account_id, "method_name": method_name,
            "args_base64": "", "block_id": FACTS.head_height}  # fmt: skip


def test_a_missing_host_function_without_an_upstream_is_a_failed_call(store: Path) -> None:
    answer, counted = _ask(store, "query", _call(STAKE, "total"))
    assert isinstance(answer, bytes)
    assert orjson.loads(answer)["error"] == (
        "wasm execution failed with error: WasmUnknownError { debug_message: "
        '"the host function alt_bn128_g1_sum is not implemented by nearrpc\'s executor" }'
    )
    assert counted == ["local/failed"]
    params = {"account_id": STAKE, "method_name": "total", "args_base64": "", "block_id": FACTS.head_height}
    answer, _ = _ask(store, "EXPERIMENTAL_call_function", params)
    assert isinstance(answer, RpcError) and answer.kind.cause == "CONTRACT_EXECUTION_ERROR"


def test_validator_stakes_are_the_epochs_stored_validators(store: Path) -> None:
    async def current() -> list[dict[str, Any]]:
        reader = open_store(store, "serve")
        try:
            head = await reader.block_by_height(FACTS.head_height)
            assert head is not None
            record = await reader.validators(head.epoch_id)
            assert record is not None
            validators: list[dict[str, Any]] = orjson.loads(record.view_json)["current_validators"]
            return validators
        finally:
            await reader.close()

    validators = asyncio.run(current())
    answer, counted = _ask(store, "query", _call(VALIDATORS, "total"))
    assert isinstance(answer, bytes) and counted == ["local/executed"]
    total = int.from_bytes(bytes(orjson.loads(answer)["result"]), "little")
    assert total == sum(int(validator["stake"]) for validator in validators) > 0
    first = validators[0]
    args = base64.b64encode(first["account_id"].encode()).decode()
    answer, _ = _ask(store, "query", {**_call(VALIDATORS, "stake_of"), "args_base64": args})
    assert isinstance(answer, bytes)
    assert int.from_bytes(bytes(orjson.loads(answer)["result"]), "little") == int(first["stake"])


def test_a_missing_host_function_is_the_upstreams_answer_verbatim(store: Path) -> None:
    verbatim = b'{"result":[49],"logs":["from upstream"],"block_height":%d,"block_hash":"%s"}' % (
        FACTS.head_height, FACTS.head_hash.encode())  # fmt: skip
    upstream = StubUpstream(verbatim)
    answer, counted = _ask(store, "query", _call(STAKE, "total"), call_upstream=upstream)
    assert answer == verbatim
    assert upstream.asked == [(STAKE, "total", b"", FACTS.head_height)]
    assert counted == ["upstream/host_function"]
    # a failed call upstream: query's legacy result, EXPERIMENTAL_call_function's error
    text = 'wasm execution failed with error: HostError(GuestPanic { panic_msg: "no stake" })'
    failed = StubUpstream(orjson.dumps({"error": text, "logs": [], "block_height": FACTS.head_height,
                                        "block_hash": FACTS.head_hash}))  # fmt: skip
    answer, _ = _ask(store, "query", _call(STAKE, "total"), call_upstream=failed)
    assert answer == failed.answer
    params = {"account_id": STAKE, "method_name": "total", "args_base64": "", "block_id": FACTS.head_height}
    answer, _ = _ask(store, "EXPERIMENTAL_call_function", params, call_upstream=failed)
    assert isinstance(answer, RpcError) and answer.info is not None
    assert answer.info["vm_error"] == {"ExecutionError": "Smart contract panicked: no stake"}


def test_verify_mode_counts_and_logs_only_differences(store: Path, caplog: pytest.LogCaptureFixture) -> None:
    local, _ = _ask(store, "query", _call(FACTS.contract_account, "get_num"))
    assert isinstance(local, bytes)
    same = StubUpstream(local)
    answer, counted = _ask(store, "query", _call(FACTS.contract_account, "get_num"), **_verifying(same))
    assert answer == local and counted == ["local/executed"] and len(same.asked) == 1
    lying = StubUpstream(orjson.dumps({**orjson.loads(local), "result": list(b"-1")}))
    with caplog.at_level(logging.WARNING, logger="nearrpc.view_calls"):
        answer, counted = _ask(store, "EXPERIMENTAL_call_function", {
            "account_id": FACTS.contract_account, "method_name": "get_num", "args_base64": "",
            "block_id": FACTS.head_height}, **_verifying(lying))  # fmt: skip
    assert answer == local  # the local answer stands
    assert counted == ["difference", "local/executed"]
    assert f"{FACTS.contract_account}.get_num at block {FACTS.head_hash}" in caplog.text
    # a failed call is verified in query's form: the upstream's legacy error result
    failed, _ = _ask(store, "query", _call(FACTS.contract_account, "no_such_method"))
    assert isinstance(failed, bytes)
    _, counted = _ask(store, "query", _call(FACTS.contract_account, "no_such_method"),
                      **_verifying(StubUpstream(failed)))  # fmt: skip
    assert counted == ["local/failed"]
