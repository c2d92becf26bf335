"""The promise side of a call's gas, on its own: unused prepaid gas shared by weight
(receipt_manager.rs `distribute_gas`: floor shares, the last weighted call takes the remainder),
and the counter's reservation (gas_counter.rs `deduct_gas`: burnt and reserved gas both bounded
by the prepaid gas, the burn then stopping below what is reserved)."""

from __future__ import annotations

import pytest

from nearrpc.contracts.gas import GasCosts, GasCounter, GasExhausted
from nearrpc.contracts.promises import NewFunctionCall, PromiseReceipt, distribute_gas
from tests.sandbox.runtime_support import RUNTIME_CONFIG

COSTS = GasCosts.from_protocol_config({"runtime_config": RUNTIME_CONFIG})


def _shared(calls: list[tuple[int, int]], unused: int) -> list[int]:
    receipts = [PromiseReceipt("rick.test", actions=[NewFunctionCall("f", b"", gas, 0)]) for gas, _ in calls]
    weights = []
    for receipt, (_, weight) in zip(receipts, calls, strict=True):
        action = receipt.actions[0]
        assert isinstance(action, NewFunctionCall)
        if weight:
            weights.append((action, weight))
    given = distribute_gas(weights, unused)
    assert given == (unused if weights and sum(w for _, w in calls) else 0)
    return [action.gas for receipt in receipts for action in receipt.actions if isinstance(action, NewFunctionCall)]


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        ([(0, 1)], [10_000_000_000]),
        ([(0, 3), (0, 2)], [6_000_000_000, 4_000_000_000]),
        ([(1_000_000, 3), (3_000_000, 2)], [5_998_600_000, 4_001_400_000]),
        ([(0, 2**64 - 1), (0, 1000)], [9_999_999_999, 1]),
        ([(0, 10_000_000_000), (0, 1), (0, 10_000_000_000)], [4_999_999_999, 0, 5_000_000_001]),
        ([(0, 0), (0, 1)], [0, 10_000_000_000]),
    ],
)
def test_unused_gas_is_shared_by_weight(calls: list[tuple[int, int]], expected: list[int]) -> None:
    # nearcore's own cases: 10^10 gas in all, the static gas taken first
    unused = 10_000_000_000 - sum(gas for gas, _ in calls)
    assert _shared(calls, unused) == expected


def test_no_weight_shares_nothing() -> None:
    assert _shared([(5, 0)], 100) == [5]


def test_reserved_gas_bounds_the_burn() -> None:
    gas = GasCounter(COSTS, prepaid_gas=1000)
    gas.deduct(100, 600, "function_call_base")  # 100 burnt, 500 reserved
    assert (gas.burnt, gas.promises_gas, gas.stop) == (100, 500, 500)
    with pytest.raises(GasExhausted):
        gas.pay(450)  # past the 400 left to burn
    # gas_counter.rs `process_gas_limit`: the burn goes as far as it asked, never past the prepaid
    # gas, and what stays reserved is the rest of it
    assert (gas.burnt, gas.promises_gas) == (550, 450)
    assert gas.exhausted_text == "HostError(GasExceeded)"


def test_a_reservation_past_the_prepaid_gas_fails() -> None:
    gas = GasCounter(COSTS, prepaid_gas=1000)
    with pytest.raises(GasExhausted):
        gas.deduct(10, 1200, "function_call_base")
    assert (gas.burnt, gas.promises_gas) == (10, 990)
