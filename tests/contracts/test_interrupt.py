"""A call stopped from outside (contracts.interrupt): a loop that would run long past its deadline
is stopped there, not at its gas limit; a stop asked from another thread ends a running loop
within ticks; a call without an interrupt never sees the ticks; a call whose stop came before it
started compiles nothing."""

from __future__ import annotations

import threading
import time

import pytest

from nearrpc.contracts import CANCELLED, DEADLINE, SHUTDOWN, ExecutionInterrupted, Interrupt, ViewCallError, ViewEngine
from tests.contracts.support import CONTEXT, DictState, code_hash, module, with_limit

SPIN = module('(func (export "spin") (loop $l (br $l)))')
# a limit a loop takes tens of seconds to reach: only the interrupt ends it soon
FOREVER = with_limit(10**17)


def _spin(engine: ViewEngine, interrupt: Interrupt | None, code: bytes = SPIN) -> None:
    engine.run_view(code, code_hash(code), "spin", b"", CONTEXT, DictState(), FOREVER, interrupt=interrupt)


def test_a_loop_is_stopped_at_its_deadline_not_its_gas_limit() -> None:
    engine = ViewEngine()
    started = time.monotonic()
    with pytest.raises(ExecutionInterrupted) as stopped:
        _spin(engine, Interrupt(0.1))
    assert stopped.value.reason == DEADLINE
    assert engine.ticker.ticks > 0  # the epoch advanced while it ran, and the store asked
    assert time.monotonic() - started < 5  # far from the gas limit (tens of seconds)


def test_a_stop_from_another_thread_ends_a_running_loop() -> None:
    engine = ViewEngine()
    interrupt = Interrupt()  # no deadline: only the stop ends it
    outcome: list[str] = []

    def worker() -> None:
        try:
            _spin(engine, interrupt)
        except ExecutionInterrupted as stopped:
            outcome.append(stopped.reason)

    thread = threading.Thread(target=worker)
    thread.start()
    time.sleep(0.05)
    assert thread.is_alive()  # running, not refused
    interrupt.stop(CANCELLED)
    interrupt.stop(SHUTDOWN)  # the first reason stands
    thread.join(timeout=5)
    assert not thread.is_alive() and outcome == [CANCELLED]


def test_a_call_without_an_interrupt_runs_through_the_ticks() -> None:
    engine = ViewEngine()
    interrupt = Interrupt()
    outcome: list[str] = []

    def other() -> None:
        try:
            _spin(engine, interrupt)
        except ExecutionInterrupted as stopped:
            outcome.append(stopped.reason)

    thread = threading.Thread(target=other)
    thread.start()  # keeps the ticker running
    try:
        time.sleep(0.03)
        with pytest.raises(ViewCallError) as failed:  # its own gas limit ends it, not the epoch
            engine.run_view(SPIN, code_hash(SPIN), "spin", b"", CONTEXT, DictState(), with_limit(10**14))
        assert "GasLimitExceeded" in failed.value.vm_error
        assert engine.ticker.ticks > 0
    finally:
        interrupt.stop(CANCELLED)
        thread.join(timeout=5)
    assert outcome == [CANCELLED]


def test_a_call_stopped_before_it_starts_compiles_nothing() -> None:
    engine = ViewEngine()
    interrupt = Interrupt()
    interrupt.stop(SHUTDOWN)
    with pytest.raises(ExecutionInterrupted) as stopped:
        _spin(engine, interrupt, module('(func (export "spin"))'))
    assert stopped.value.reason == SHUTDOWN and engine.compilations == 0


def test_what_a_call_waits_on_is_cancelled_with_it() -> None:
    interrupt = Interrupt()
    cancelled: list[str] = []
    forget = interrupt.on_stop(lambda: cancelled.append("first"))
    interrupt.on_stop(lambda: cancelled.append("second"))
    forget()  # done: not cancelled
    interrupt.stop(CANCELLED)
    interrupt.on_stop(lambda: cancelled.append("late"))  # stopped already: at once
    assert cancelled == ["second", "late"]
