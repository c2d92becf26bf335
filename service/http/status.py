"""`GET /status`: nearcore's status answer (nearrpc.methods.status, the same document as
JSON-RPC `status`), with what the store can fill, plus our own summary under `nearrpc`: the
interface version, a store summary and what the store cannot answer.
"""

from __future__ import annotations

from nearrpc.methods.status import StatusReport as ChainStatus
from nearrpc.store import ACCOUNTS_CHOSEN, ServingReader, StoreInfo
from nearrpc.version import INTERFACE_VERSION


async def _store_gaps(reader: ServingReader, info: StoreInfo, genesis_stored: bool) -> list[str]:
    """What the store cannot answer, in words, so an operator sees it without trying."""
    gaps = ["no node behind the store: validators are the genesis config's, node_public_key is the service's own"]
    configs = (("genesis_config", reader.genesis_config_json), ("client_config", reader.client_config_json))
    for method, load in configs:
        if await load() is None:
            gaps.append(f"no {method} stored: the method answers INTERNAL_ERROR")
    if info.block_count == 0:
        gaps.append(
            "no blocks stored (a genesis file alone does not define the genesis block): block and "
            "protocol config answer UNKNOWN_BLOCK or NOT_SYNCED_YET, view_account UNKNOWN_BLOCK; "
            "import block views to serve them; sync_info and protocol versions are left out, and "
            "JSON-RPC status answers INTERNAL_ERROR"
        )
    elif not genesis_stored:
        gaps.append(
            "neither the genesis block nor its hash is stored: genesis_hash and node_public_key are left out, "
            "and JSON-RPC status answers INTERNAL_ERROR"
        )
    if await reader.fetched(ACCOUNTS_CHOSEN):
        gaps.append(
            "a recording of chosen accounts (or a fork's store): served alone, a view of any other account, or of "
            "one at a height the store did not see it, answers that the store does not hold it (INTERNAL_ERROR, "
            "from query UNAVAILABLE_SHARD), not UNKNOWN_ACCOUNT"
        )
    return gaps


class StatusReport:
    """The status document of `GET /status`."""

    def __init__(self, reader: ServingReader, rpc_addr: str | None) -> None:
        self._reader = reader
        self._chain = ChainStatus(reader, rpc_addr)

    async def document(self) -> dict[str, object]:
        status = await self._chain.document()
        info = await self._reader.info()
        status["nearrpc"] = {
            "interface_version": INTERFACE_VERSION,
            "store": {
                "schema_version": info.schema_version,
                "genesis_height": info.genesis_height,
                "blocks": info.block_count,
                "epochs": info.epoch_count,
                "account_states": info.account_state_count,
            },
            "limitations": await _store_gaps(self._reader, info, "genesis_hash" in status),
        }
        return status
