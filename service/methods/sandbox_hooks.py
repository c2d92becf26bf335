"""The sandbox's chain as the writing methods see it: a hook the CLI hands over (as a fork's
hooks in view_calls), implemented by nearrpc.sandbox.chain. The handlers never produce blocks
themselves; they submit, wait, and then answer from the store like every read method."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

# TxExecutionStatus, in the order a transaction reaches them.
TX_STATUSES = ("NONE", "INCLUDED", "EXECUTED_OPTIMISTIC", "INCLUDED_FINAL", "EXECUTED", "FINAL")


class PatchRefused(ValueError):
    """sandbox_patch_state's records cannot be applied: the message names the record and why."""


class SandboxChain(Protocol):
    async def submit(self, signed_transaction: bytes) -> str:
        """Validate a signed transaction (borsh bytes) against the head's state and queue it for
        the next block; returns its hash (base58). Raises sandbox.runtime.model.TransactionRefused
        with nearcore's InvalidTxError, or TransactionUndecodable for bytes that are no borsh
        SignedTransaction. A transaction already known answers its hash again."""
        ...

    async def wait(self, tx_hash: str, status: str, timeout_s: float) -> str:
        """Wait until the transaction reached `status` (one of TX_STATUSES) or `timeout_s` passed;
        returns the status reached (which may be below `status` on a timeout)."""
        ...

    async def patch_state(self, records: Sequence[Mapping[str, Any]]) -> None:
        """sandbox_patch_state: StateRecord JSON objects (Account, AccessKey, Contract, Data),
        applied in a new block. Raises PatchRefused, with nothing written, for records it cannot apply."""
        ...

    async def fast_forward(self, delta_height: int) -> None:
        """sandbox_fast_forward: produce `delta_height` blocks (empty but for what is sent meanwhile)."""
        ...

    async def snapshot(self) -> str:
        """Mark the chain as it is now; returns the snapshot's id."""
        ...

    async def revert(self, snapshot_id: str) -> None:
        """Return the chain to a snapshot (blocks, state and records after it are dropped). Raises
        KeyError for an unknown id."""
        ...
