"""nearcore's status answer (StatusResponse), filled with what the store and the service can say
truthfully; both JSON-RPC `status` and `GET /status` are made from it, as in nearcore.

Members, in nearcore's order: version, chain_id, protocol_version, latest_protocol_version,
rpc_addr, validators, sync_info, validator_account_id, validator_public_key, node_public_key,
node_key, uptime_sec, genesis_hash. Here:
- from the store: chain_id, the head epoch's protocol_version, the head block's
  latest_protocol_version, sync_info (head, its state root and time, earliest block, epoch),
  genesis_hash (the genesis block's, or the hash a recording kept without it), and validators:
  the genesis config's validators (the store records no change of
  the validator set; nearcore lists the head epoch's block producers);
- from this service: version (the service's), rpc_addr (where it listens), uptime_sec, and
  node_public_key, the service's own key (`node_key`); the service is no validator, so
  validator_account_id, validator_public_key and node_key are null, as a non-validating node's.
A member the store cannot fill is left out; JSON-RPC `status` then answers INTERNAL_ERROR
naming it, as every member it leaves out is required by the spec.
"""

from __future__ import annotations

import time
from typing import Any, Final

import orjson

from nearrpc.methods.node_key import node_public_key
from nearrpc.store import ServingReader, StoredBlock
from nearrpc.version import SERVICE_VERSION

# The members the spec requires of a status answer (RpcStatusResponse.required).
REQUIRED_MEMBERS: Final = (
    "version", "chain_id", "protocol_version", "latest_protocol_version", "validators", "sync_info",
    "node_public_key", "uptime_sec", "genesis_hash",
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

    async def _validators(self) -> list[dict[str, str]] | None:
        genesis = await self._reader.genesis_config_json()
        if genesis is None:
            return None
        return [{"account_id": v["account_id"]} for v in orjson.loads(genesis)["validators"]]

    async def document(self) -> dict[str, object]:
        """The members the store and the service can fill, in nearcore's order."""
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
        validators = await self._validators()
        if validators is not None:
            status["validators"] = validators
        if head is not None:
            status["sync_info"] = await self._sync_info(head)
        genesis = await reader.genesis_block()
        # a store without its genesis block (a recording of later heights) keeps its hash
        genesis_hash = genesis.hash if genesis is not None else await reader.genesis_hash()
        status["validator_account_id"] = None
        status["validator_public_key"] = None
        if genesis_hash is not None:
            status["node_public_key"] = node_public_key(genesis_hash)
        status["node_key"] = None
        status["uptime_sec"] = int(time.monotonic() - self._started)
        if genesis_hash is not None:
            status["genesis_hash"] = genesis_hash
        return status


def missing_members(document: dict[str, object]) -> list[str]:
    """The required members a status document lacks."""
    return [member for member in REQUIRED_MEMBERS if member not in document]
