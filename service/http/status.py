"""`GET /status` in nearcore's shape, filled with what the store can say truthfully.

nearcore's status answer (StatusResponse) has, in this order: version, chain_id,
protocol_version, latest_protocol_version, rpc_addr, validators, sync_info,
validator_account_id, validator_public_key, node_public_key, node_key, uptime_sec,
genesis_hash (and detailed_debug_status on request). Here:
- from the store: chain_id, the head epoch's protocol_version, the head block's
  latest_protocol_version, sync_info (head, its state root and time, earliest block, epoch),
  genesis_hash (when the genesis block is stored);
- from this service: version (the service's), rpc_addr (where it listens), uptime_sec;
- left out, as only a running node has them: validators, validator_account_id,
  validator_public_key, node_public_key, node_key; also any member the store cannot fill;
- under `nearrpc`: the interface version, a store summary and what the store cannot answer.
"""

from __future__ import annotations

import time
from typing import Any, Final

import orjson

from nearrpc.store import ServingReader, StoredBlock, StoreInfo
from nearrpc.version import INTERFACE_VERSION, SERVICE_VERSION

NODE_ONLY_MEMBERS: Final = (
    "validators", "validator_account_id", "validator_public_key", "node_public_key", "node_key",
)


def block_time(timestamp_ns: int) -> str:
    """A block timestamp as nearcore's status writes it (chrono's RFC 3339, UTC, 'Z', with 0, 3,
    6 or 9 fraction digits: as few as show the value exactly)."""
    seconds, nanos = divmod(timestamp_ns, 1_000_000_000)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    if nanos:
        digits = 3 if nanos % 1_000_000 == 0 else 6 if nanos % 1_000 == 0 else 9
        text += "." + f"{nanos:09d}"[:digits]
    return text + "Z"


def _header(block: StoredBlock) -> dict[str, Any]:
    header: dict[str, Any] = orjson.loads(block.view_json)["header"]
    return header


async def _store_gaps(reader: ServingReader, info: StoreInfo, genesis_stored: bool) -> list[str]:
    """What the store cannot answer, in words, so an operator sees it without trying."""
    gaps = ["no node behind the store: validators and node or validator keys are not reported"]
    configs = (("genesis_config", reader.genesis_config_json), ("client_config", reader.client_config_json))
    for method, load in configs:
        if await load() is None:
            gaps.append(f"no {method} stored: the method answers INTERNAL_ERROR")
    if info.block_count == 0:
        gaps.append(
            "no blocks stored (a genesis file alone does not define the genesis block): block and "
            "protocol config answer UNKNOWN_BLOCK or NOT_SYNCED_YET, view_account UNKNOWN_BLOCK; "
            "import block views to serve them; sync_info and protocol versions are left out"
        )
    elif not genesis_stored:
        gaps.append("the genesis block is not stored: genesis_hash is left out")
    return gaps


class StatusReport:
    """Builds the status document; remembers each epoch's start height once found."""

    def __init__(self, reader: ServingReader, rpc_addr: str | None) -> None:
        self._reader = reader
        self._rpc_addr = rpc_addr
        self._started = time.monotonic()
        self._epoch_starts: dict[str, int | None] = {}
        self._generation: int | None = None

    def _follow_the_store(self) -> None:
        # Asking for the version is what makes a reader notice a replaced file (as the JSON-RPC
        # endpoint does before each request); epoch starts found in another store do not hold.
        generation = self._reader.version().generation
        if generation != self._generation:
            self._epoch_starts.clear()
            self._generation = generation

    async def _epoch_start(self, head: StoredBlock) -> int | None:
        if head.epoch_id not in self._epoch_starts:
            self._epoch_starts[head.epoch_id] = await self._reader.epoch_start_height(head)
        return self._epoch_starts[head.epoch_id]

    async def _sync_info(self, head: StoredBlock) -> dict[str, object]:
        header = _header(head)
        sync: dict[str, object] = {
            "latest_block_hash": head.hash,
            "latest_block_height": head.height,
            "latest_state_root": header["prev_state_root"],
            "latest_block_time": block_time(header["timestamp"]),
            "syncing": False,  # a store does not sync: its head is what was imported
        }
        earliest = await self._reader.earliest_block()
        if earliest is not None:
            sync["earliest_block_hash"] = earliest.hash
            sync["earliest_block_height"] = earliest.height
            sync["earliest_block_time"] = block_time(_header(earliest)["timestamp"])
        sync["epoch_id"] = head.epoch_id
        start = await self._epoch_start(head)
        if start is not None:
            sync["epoch_start_height"] = start
        return sync

    async def document(self) -> dict[str, object]:
        self._follow_the_store()
        reader = self._reader
        info = await reader.info()
        head = await reader.head()
        status: dict[str, object] = {
            "version": {"version": SERVICE_VERSION, "build": "nearrpc", "commit": "unknown", "rustc_version": ""},
        }
        if info.chain_id is not None:
            status["chain_id"] = info.chain_id
        if head is not None:
            epoch = await reader.epoch(head.epoch_id)
            if epoch is not None:
                status["protocol_version"] = epoch.protocol_version
            status["latest_protocol_version"] = _header(head)["latest_protocol_version"]
        if self._rpc_addr is not None:
            status["rpc_addr"] = self._rpc_addr
        if head is not None:
            status["sync_info"] = await self._sync_info(head)
        status["uptime_sec"] = int(time.monotonic() - self._started)
        genesis = await reader.genesis_block()
        if genesis is not None:
            status["genesis_hash"] = genesis.hash
        status["nearrpc"] = {
            "interface_version": INTERFACE_VERSION,
            "store": {
                "schema_version": info.schema_version,
                "genesis_height": info.genesis_height,
                "blocks": info.block_count,
                "epochs": info.epoch_count,
                "account_states": info.account_state_count,
            },
            "limitations": await _store_gaps(reader, info, genesis is not None),
        }
        return status
