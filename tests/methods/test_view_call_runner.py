"""Where a view call runs (methods.view_calls.ViewRunner), over real stores on each backend:
over SQLite, whose reads never wait, a compiled contract's call runs on the event loop within a
slice and answers there; a module not compiled yet, a call that runs out of its slice, and every
call over PostgreSQL (whose reads wait on the database) run on a worker thread, with the same
answers. The worker threads end with the server (the app's lifespan)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from nearrpc.contracts import ViewCallError, engine
from nearrpc.http.app import build_app
from nearrpc.methods.errors import RpcError
from nearrpc.methods.view_calls import ViewRunner
from nearrpc.store import ServingReader, open_store
from tests.contracts.support import CONTEXT, module, with_limit
from tests.support.backends import BACKENDS, store_on
from tests.support.sample_facts import SampleFacts, sample_facts

FACTS: SampleFacts = sample_facts()
LOOP = module('(func (export "m") (loop $l (br $l)))')
GAS_LIMIT_EXCEEDED = "wasm execution failed with error: HostError(GasLimitExceeded)"
COSTS = with_limit(10**13)
LONG = with_limit(10**14)  # a loop runs ~120 million instructions: a tenth of a second and more


def _holder() -> str:
    return next(row.key[1:].decode() for row in FACTS.contract_data if row.account_id == FACTS.token_account
                and row.key[:1] == b"b")  # fmt: skip


async def _balance(runner: ViewRunner, reader: ServingReader, holder: str) -> bytes:
    code = await reader.contract_code(FACTS.token_code_hash)
    assert code is not None
    context = CONTEXT.__class__(**{**CONTEXT.__dict__, "account_id": FACTS.token_account,
                                   "block_height": FACTS.head_height})  # fmt: skip
    args = orjson.dumps({"account_id": holder})
    outcome = await runner.run(reader, code, FACTS.token_code_hash, "ft_balance_of", args, context, COSTS)
    return outcome.result


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, sample_store: Path) -> Path | str:
    return store_on(request.param, sample_store, request)


def test_a_call_runs_on_the_loop_where_reads_never_wait(location: Path | str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "_ENGINE", None)  # a fresh engine: the token's module not compiled yet
    inline = isinstance(location, Path)

    async def calls() -> list[bytes]:
        reader = open_store(location, "serve")
        runner = ViewRunner()
        try:
            answers = [await _balance(runner, reader, holder) for holder in (_holder(), _holder(), "nobody.localnet")]
        finally:
            runner.close()
            await reader.close()
        # the first call compiled the module on a worker; the others ran on the loop over SQLite
        assert (runner.threaded_runs, runner.inline_runs) == ((1, 2) if inline else (3, 0))
        return answers

    answers = asyncio.run(calls())
    assert answers[0] == answers[1] != answers[2]
    assert int(orjson.loads(answers[0])) > 0 and orjson.loads(answers[2]) == "0"


def test_a_call_that_runs_out_of_its_slice_is_run_again_on_a_worker(sample_store: Path) -> None:
    async def loops() -> tuple[ViewRunner, list[str], int]:
        reader = open_store(sample_store, "serve")
        runner = ViewRunner()
        ticks = 0

        async def tick() -> None:  # the loop keeps turning while the view runs
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        ticker = asyncio.get_running_loop().create_task(tick())
        failures = []
        try:
            # the first compiles on a worker; the second starts on the loop and runs out of its
            # slice; the third, of a method known to run long, goes to a worker at once
            for _ in range(3):
                with pytest.raises(ViewCallError) as failure:
                    await runner.run(reader, LOOP, "loop", "m", b"", CONTEXT, LONG)
                failures.append(failure.value.vm_error)
        finally:
            ticker.cancel()
            runner.close()
            await reader.close()
        return runner, failures, ticks

    runner, failures, ticks = asyncio.run(loops())
    assert failures == [GAS_LIMIT_EXCEEDED] * 3
    assert (runner.threaded_runs, runner.slices_run_out, runner.inline_runs) == (3, 1, 0)
    assert ticks > 30  # the loops ran off the event loop (each takes ~100 ms and more)


def _view_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("nearrpc-view")]


def test_the_worker_threads_end_with_the_server(sample_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "_ENGINE", None)  # not compiled yet: the first call runs on a worker
    for thread in _view_threads():  # other tests' runners, closed or not
        thread.join(timeout=10)
    app = build_app(open_store(sample_store, "serve"))
    params = {"request_type": "call_function", "account_id": FACTS.token_account, "method_name": "ft_metadata",
              "args_base64": "", "finality": "final"}  # fmt: skip

    async def serve_and_stop() -> int:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://nearrpc") as client:
                body = {"jsonrpc": "2.0", "id": 1, "method": "query", "params": params}
                answer = (await client.post("/", json=body)).json()
                assert "result" in answer["result"], answer
            return len(_view_threads())

    assert asyncio.run(serve_and_stop()) == 1
    for thread in _view_threads():
        thread.join(timeout=10)
    assert _view_threads() == []


def test_a_closed_runner_refuses_what_would_need_a_worker(sample_store: Path) -> None:
    async def after_close() -> None:
        reader = open_store(sample_store, "serve")
        runner = ViewRunner()
        runner.close()
        try:
            with pytest.raises(RpcError) as refused:  # a module to compile needs a worker
                await runner.run(reader, module('(func (export "m"))'), "closed", "m", b"", CONTEXT, COSTS)
        finally:
            await reader.close()
        assert refused.value.info == {"error_message": "the server is shutting down: it runs no more view calls"}

    asyncio.run(after_close())


def test_a_context_holding_the_runners_stakes_runs_as_it_is(
    sample_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A context made with `ViewRunner.validators` (the handlers keep it per account and block)
    reaches the engine as it is; one without stakes, or with those of another reader, is given
    the runner's stakes through the reader it runs over."""
    seen: list[object] = []
    run_view = engine.ViewEngine.run_view

    def spy(self: engine.ViewEngine, *call: Any) -> Any:
        seen.append(call[4].validators)  # code, code hash, method, args, context, ...
        return run_view(self, *call)

    monkeypatch.setattr(engine.ViewEngine, "run_view", spy)
    code = module('(func (export "m"))')

    async def calls() -> None:
        reader, other = open_store(sample_store, "serve"), open_store(sample_store, "serve")
        runner = ViewRunner()
        try:
            bound = replace(CONTEXT, validators=runner.validators(reader, CONTEXT.epoch_id))
            for context, over in ((bound, reader), (bound, other), (CONTEXT, reader)):
                await runner.run(over, code, "stakes", "m", b"", context, COSTS)
            assert seen[0] is bound.validators
            assert seen[1] is not None and seen[1] is not bound.validators
            assert seen[2] is not None
        finally:
            runner.close()
            await reader.close()
            await other.close()

    asyncio.run(calls())
