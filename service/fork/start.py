"""Before a fork serves: its store, created from the upstream or checked against it.

- No store yet: it is created from the upstream's genesis and client configs (an unreachable
  upstream is then a refusal: there is nothing to serve).
- A store: the upstream must serve its chain (chain id and genesis height); an upstream of
  another chain is refused. An upstream that does not answer now is only a warning: what is
  stored is served, and each worker checks the chain again before it records anything.
- `fork_height`: the pinned head must be a block at or below the upstream's final head, so that
  what the fork serves below it never changes; it is recorded now unless stored.
- A sandboxed fork (`sandbox`): its pin is kept in the store (the sandbox's blocks go above it,
  so a later start must pin the same height): by default the upstream's final head at the first
  start, then the kept one, which the upstream need not be asked for (a replay runs offline).
  The pinned head's epoch (its protocol config) is recorded too: the sandbox's first block needs
  it before any request could have fetched it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from nearrpc.fork import marks
from nearrpc.fork.upstream import Upstream, UpstreamError, UpstreamSettings
from nearrpc.ingest import jsonio
from nearrpc.ingest.blocks_import import stored_block
from nearrpc.ingest.epochs import recorded_epoch
from nearrpc.spec import SchemaViolation
from nearrpc.store import (
    ACCOUNTS_CHOSEN,
    StoreError,
    StoreLocation,
    StoreNotFoundError,
    StoreOptions,
    describe_location,
    open_store,
)

log = logging.getLogger("nearrpc.fork")


class ForkRefused(Exception):
    """Why the fork does not start, in one line."""


@dataclass(frozen=True, slots=True)
class ForkStart:
    upstream: UpstreamSettings
    store: StoreLocation
    store_options: StoreOptions | None
    fork_height: int | None
    sandbox: bool = False  # a sandbox makes blocks above the pinned head (module docstring)


def _chain_of(genesis: Any, what: str) -> tuple[str, int]:
    if not isinstance(genesis, dict) or not isinstance(genesis.get("chain_id"), str):
        raise UpstreamError(f"{what}: the genesis_config answer names no chain_id")
    height = genesis.get("genesis_height")
    if isinstance(height, bool) or not isinstance(height, int):
        raise UpstreamError(f"{what}: the genesis_config answer has no integer genesis_height")
    return genesis["chain_id"], height


def _stored_pin(start: ForkStart) -> int | None:
    """The height a sandboxed fork of this store was pinned at (None: none yet, or no store)."""
    try:
        reader = open_store(start.store, "read", start.store_options)
    except StoreNotFoundError:
        return None
    try:
        kept = reader.kept_answer(marks.SANDBOX_PIN)
        return None if kept is None else int(kept)
    finally:
        reader.close()


def _check_nothing_above(start: ForkStart, pin: int) -> None:
    """A new sandboxed fork's chain goes on from its pin: a store holding blocks above it (kept
    by an earlier live fork) would put the sandbox's blocks on one of those."""
    try:
        reader = open_store(start.store, "read", start.store_options)
    except StoreNotFoundError:
        return
    try:
        head = reader.head()
    finally:
        reader.close()
    if head is not None and head.height > pin:
        raise ForkRefused(
            f"a sandboxed fork pinned at {pin} makes its blocks above it, and {describe_location(start.store)} "
            f"holds blocks up to {head.height} already (give --fork-height {head.height} or more, or another store)"
        )


def _stored_chain(start: ForkStart) -> tuple[str | None, int | None] | None:
    """The stored chain id and genesis height; None when there is no store yet."""
    try:
        reader = open_store(start.store, "read", start.store_options)
    except StoreNotFoundError:
        return None
    try:
        info = reader.info()
        return info.chain_id, info.genesis_height
    finally:
        reader.close()


def _write(start: ForkStart, writes: list[tuple[str, Any]]) -> None:
    try:
        with open_store(start.store, "write", start.store_options) as writer, writer.batch() as batch:
            batch.put_fetched(ACCOUNTS_CHOSEN)  # a store of the accounts asked for (`ForkWriter`)
            for kind, value in writes:
                if kind == "genesis_config":
                    batch.put_genesis_config(jsonio.compact(value))
                elif kind == "client_config":
                    batch.put_client_config(jsonio.compact(value))
                elif kind == "epoch":
                    batch.put_epoch(value)
                elif kind == "pin":
                    batch.put_kept_answer(marks.SANDBOX_PIN, str(value).encode())
                else:
                    batch.put_block(stored_block(value))
    except (SchemaViolation, KeyError, TypeError, ValueError) as refused:
        kinds = " and ".join(kind for kind, _ in writes)
        raise UpstreamError(f"the upstream's answers ({kinds}) are refused: {refused}") from None


async def _final_height(node: Upstream) -> int:
    """The height of the upstream's final block."""
    final = await node.result("block", {"finality": "final"})
    header = final.get("header") if isinstance(final, dict) else None
    height = header.get("height") if isinstance(header, dict) else None
    if isinstance(height, bool) or not isinstance(height, int):
        raise UpstreamError(f"{node.address}: block final: the answer names no integer height")
    return height


async def _check_pin(node: Upstream, height: int) -> None:
    """A pinned head must be final on the upstream (asked before anything is written)."""
    final = await node.result("block", {"finality": "final"})
    final_height = final["header"]["height"] if isinstance(final, dict) else None
    if not isinstance(final_height, int) or height > final_height:
        raise ForkRefused(
            f"--fork-height {height} is above the upstream's final block {final_height}: a pinned head must be "
            "final, or what the fork serves below it could still change"
        )


async def _pinned_head(node: Upstream, start: ForkStart, height: int, *, store_exists: bool) -> dict[str, Any] | None:
    """The block at the pinned height, to record (None: stored already)."""
    if store_exists:
        reader = open_store(start.store, "read", start.store_options)
        try:
            if reader.block_by_height(height) is not None:
                return None
        finally:
            reader.close()
    reply = await node.call("block", {"block_id": height})
    if reply.cause == "UNKNOWN_BLOCK":
        raise ForkRefused(f"--fork-height {height}: the upstream has no block at that height (a skipped height)")
    if reply.error is not None or not isinstance(reply.result, dict):
        raise UpstreamError(f"{node.address}: block {height}: the node answered {reply.describe()}")
    # its hash is only the node's word: the node must answer the same block when asked by it
    named = reply.result.get("header")
    header: dict[str, Any] = named if isinstance(named, dict) else {}
    again = await node.result("block", {"block_id": header.get("hash")})
    if not isinstance(again, dict) or again.get("header") != header:
        raise UpstreamError(
            f"{node.address}: block {height}: the node answers it with hash {header.get('hash')}, and another "
            "block when asked by that hash: nothing is kept"
        )
    return reply.result


async def _head_epoch(node: Upstream, start: ForkStart, height: int, head: dict[str, Any] | None) -> Any:
    """The pinned head's epoch as the upstream's protocol config there (None: stored already)."""
    if head is not None:  # its header a dict (`_pinned_head`)
        epoch_id, block_hash = head["header"].get("epoch_id"), head["header"].get("hash")
        if not isinstance(epoch_id, str) or not isinstance(block_hash, str):
            raise UpstreamError(f"{node.address}: block {height}: the header names no epoch_id or hash")
    else:
        reader = open_store(start.store, "read", start.store_options)
        try:
            block = reader.block_by_height(height)
            if block is None or reader.epoch(block.epoch_id) is not None:
                return None
            epoch_id, block_hash = block.epoch_id, block.hash
        finally:
            reader.close()
    config = await node.result("EXPERIMENTAL_protocol_config", {"block_id": block_hash})
    try:
        return recorded_epoch(epoch_id, config)
    except (ValueError, TypeError, AttributeError) as refused:
        raise UpstreamError(f"{node.address}: the protocol config at the pinned head is refused: {refused}") from None


def _sandbox_pin(start: ForkStart) -> tuple[ForkStart, bool]:
    """The start with a sandboxed fork's pin as kept (None: to be chosen), and whether it is new."""
    kept = _stored_pin(start)
    if kept is None:
        return start, True
    if start.fork_height is not None and start.fork_height != kept:
        raise ForkRefused(
            f"--fork-height {start.fork_height}: this store's sandbox is pinned at {kept}, its blocks above it (give "
            "that height, or none, or another store)"
        )
    return dataclasses.replace(start, fork_height=kept), False


async def _prepare(start: ForkStart) -> tuple[str, int | None]:
    where = describe_location(start.store)
    stored = _stored_chain(start)
    new_pin = False
    if start.sandbox:
        start, new_pin = _sandbox_pin(start)
    async with Upstream(start.upstream) as node:
        try:
            genesis = await node.result("genesis_config", None)
            theirs = _chain_of(genesis, node.address)
        except UpstreamError as failure:
            if stored is None:
                raise ForkRefused(f"no store at {where}, and the upstream cannot fill it: {failure}") from None
            if new_pin:
                raise ForkRefused(
                    f"a sandboxed fork pins its head on the upstream, which does not answer: {failure}"
                ) from None
            log.warning("the upstream does not answer (%s); serving %s, misses answer INTERNAL_ERROR until it does",
                        failure, where)  # fmt: skip
            return f"upstream {node.address}, not answering at start", start.fork_height
        if stored is not None and stored != theirs:
            raise ForkRefused(
                f"the upstream {node.address} serves chain {theirs[0]!r} (genesis height {theirs[1]}), {where} holds "
                f"chain {stored[0]!r} (genesis height {stored[1]}): a fork records only its own chain"
            )
        writes: list[tuple[str, Any]] = []  # one batch: a refused start leaves no store behind
        if stored is None:
            writes.append(("genesis_config", genesis))
            client = await node.call("client_config", None)
            if client.error is None:
                writes.append(("client_config", client.result))
            else:  # a node that does not share it: client_config answers INTERNAL_ERROR, as from any such store
                log.warning("the upstream answers client_config with %s; the store holds none", client.describe())
        if start.sandbox and start.fork_height is None:  # pinned at the upstream's final head
            start = dataclasses.replace(start, fork_height=await _final_height(node))
        if new_pin and start.fork_height is not None:
            _check_nothing_above(start, start.fork_height)
        if start.fork_height is not None:
            if new_pin or not start.sandbox:  # a kept pin was checked when it was chosen
                await _check_pin(node, start.fork_height)
            head = await _pinned_head(node, start, start.fork_height, store_exists=stored is not None)
            if head is not None:
                writes.append(("block", head))
            if start.sandbox:
                epoch = await _head_epoch(node, start, start.fork_height, head)
                if epoch is not None:
                    writes.append(("epoch", epoch))
                if new_pin:
                    writes.append(("pin", start.fork_height))
        if writes:
            _write(start, writes)
        if stored is None:
            log.info("created %s from the upstream's genesis and client configs (chain %s)", where, theirs[0])
        line = f"upstream {node.address}" + ("" if start.fork_height is None else f", pinned at {start.fork_height}")
        return line, start.fork_height


def prepare_store(start: ForkStart) -> tuple[str, int | None]:
    """Ready the store for a fork: what to say about the upstream in the start-up line, and the
    height the fork is pinned at (a sandboxed fork's is chosen or kept here: module docstring).
    ForkRefused (one line) when the fork cannot start."""
    try:
        return asyncio.run(_prepare(start))
    except (UpstreamError, StoreError) as failure:
        raise ForkRefused(str(failure)) from None
