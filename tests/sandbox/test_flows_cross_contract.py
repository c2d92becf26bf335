"""near-sdk-rs's cross-contract example (examples/cross-contract-calls, the 2022 builds: high-level
and low-level API): `factorial(n)` calls itself for n - 1 and then its own `factorial_mult(n)`
callback on the result, through promises, so n levels of receipts, each callback waiting for the
data of the call before it. The final value is n!; the high-level build logs each step."""

from __future__ import annotations

import math

import pytest

from tests.sandbox.flows_support import TGAS, Flow, call, deploy, total_near
from tests.sandbox.runtime_support import NEAR, Chain, Signer

CONTRACT = "factorial.test"


@pytest.mark.parametrize("wasm", ["new_cross_contract_high_level.wasm", "new_cross_contract_low_level.wasm"])
@pytest.mark.parametrize("n", [1, 5])
def test_factorial_through_promises(wasm: str, n: int) -> None:
    chain = Chain()
    alice = Signer("alice.test")
    chain.add_account(alice, 100 * NEAR)
    deploy(chain, Signer(CONTRACT), wasm)
    near_before = total_near(chain)
    flow = Flow.of(chain.run([alice.sign(CONTRACT, [call("factorial", {"n": n}, gas=300 * TGAS)], chain.block_hash)]))

    assert flow.failures() == []
    assert flow.final_value() == math.factorial(n)
    # factorial(n) returns its factorial_mult(n), which got (n-1)! from factorial(n-1)'s own
    # returned callback: the output data receivers are handed down, so the chain is one hop
    by_id = {o["id"]: o for o in flow.all}
    first = by_id[flow.transaction["outcome"]["status"]["SuccessReceiptId"]]["outcome"]["status"]
    assert ("SuccessReceiptId" in first) is (n > 1)
    if n > 1:
        assert "SuccessValue" in by_id[first["SuccessReceiptId"]]["outcome"]["status"]
    calls = [o for o in flow.by_executor(CONTRACT)]
    # factorial(n) .. factorial(1), and factorial_mult(2) .. factorial_mult(n)
    assert len(calls) == n + (n - 1)
    if "high_level" in wasm:
        expected = [
            line
            for k in range(2, n + 1)
            for line in (f"Received {k} and {math.factorial(k - 1)}", f"Multiplied {math.factorial(k)}")
        ]
        assert flow.logs() == expected
    # each level runs a block after the one that made it: n calls down, n - 1 callbacks up
    executed_in = [
        index
        for index, block in enumerate(flow.blocks)
        for applied in block.receipts
        if applied.receipt_id in {o["id"] for o in calls}
    ]
    assert len(set(executed_in)) == 2 * n - 1
    assert near_before - total_near(chain) == flow.tokens_burnt()


def test_factorial_mult_is_private() -> None:
    """#[private]: a callback called by anyone but the contract itself panics."""
    chain = Chain()
    alice = Signer("alice.test")
    chain.add_account(alice, 100 * NEAR)
    deploy(chain, Signer(CONTRACT), "new_cross_contract_high_level.wasm")
    flow = Flow.of(chain.run([alice.sign(CONTRACT, [call("factorial_mult", {"n": 3, "cur": 2})], chain.block_hash)]))
    (failed,) = flow.failures()
    assert (
        "Method factorial_mult is private"
        in failed["outcome"]["status"]["Failure"]["ActionError"]["kind"]["FunctionCallError"]["ExecutionError"]
    )
