"""Cross-contract flows of near-sdk-rs's own example contracts (read from the reference folder,
skipped without it), run through the runtime: deploy and initialise a contract, call it, follow a
transaction's receipts across the blocks that execute them, and read what the contracts log."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nearrpc.sandbox.runtime.model import Action, BlockResult, DeployContract, FunctionCall
from tests.sandbox.runtime_support import NEAR, Chain, Signer, outcomes, reference_contract

TGAS = 10**12


def call(method: str, args: object, deposit: int = 0, gas: int = 100 * TGAS) -> FunctionCall:
    return FunctionCall(method, json.dumps(args).encode(), gas, deposit)


def deploy(chain: Chain, signer: Signer, wasm: str, init: FunctionCall | None = None, amount: int = 50 * NEAR) -> None:
    """A new account holding `wasm` (a reference contract), initialised by `init` in the same
    transaction; fails the test unless every receipt succeeded."""
    chain.add_account(signer, amount)
    actions: list[Action] = [DeployContract(reference_contract(wasm)), *([init] if init else [])]
    run = Flow.of(chain.run([signer.sign(signer.account_id, actions, chain.block_hash)]))
    assert run.failures() == [], run.failures()


@dataclass
class Flow:
    """The outcomes of a transaction and of every receipt it led to (refunds included), in the
    order the blocks executed them."""

    blocks: Sequence[BlockResult]
    all: list[dict[str, Any]]

    @classmethod
    def of(cls, blocks: Sequence[BlockResult]) -> Flow:
        return cls(blocks, outcomes(blocks))

    @property
    def transaction(self) -> dict[str, Any]:
        return self.all[0]

    def receipts(self) -> list[dict[str, Any]]:
        return self.all[1:]

    def failures(self) -> list[dict[str, Any]]:
        return [o for o in self.all if "Failure" in o["outcome"]["status"]]

    def by_executor(self, executor_id: str) -> list[dict[str, Any]]:
        return [o for o in self.receipts() if o["outcome"]["executor_id"] == executor_id]

    def logs(self) -> list[str]:
        return [line for o in self.all for line in o["outcome"]["logs"]]

    def events(self, standard: str) -> list[dict[str, Any]]:
        """NEP-297 events (`EVENT_JSON:` logs) of a standard (nep141, nep171), in order."""
        prefix = "EVENT_JSON:"
        found = [json.loads(line[len(prefix) :]) for line in self.logs() if line.startswith(prefix)]
        return [event for event in found if event["standard"] == standard]

    def tokens_burnt(self) -> int:
        """What left the total supply (the blocks' own sums: burnt less contracts' rewards)."""
        return sum(block.tokens_burnt for block in self.blocks)

    def final_value(self) -> Any:
        """The transaction's final value as nearcore derives it: follow the receipt the
        transaction's receipt forwards its result to (SuccessReceiptId) until a value."""
        by_id = {o["id"]: o for o in self.all}
        status = by_id[self.transaction["outcome"]["status"]["SuccessReceiptId"]]["outcome"]["status"]
        while "SuccessReceiptId" in status:
            status = by_id[status["SuccessReceiptId"]]["outcome"]["status"]
        assert "SuccessValue" in status, status
        raw = base64.b64decode(status["SuccessValue"])
        return json.loads(raw) if raw else None


def total_near(chain: Chain) -> int:
    return sum(account.amount + account.locked for account in chain.state.accounts.values())
