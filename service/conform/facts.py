"""What the checker learns about the endpoint from its own answers, to build further requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# A valid account id that no chain is expected to hold.
MISSING_ACCOUNT = "nearrpc-conform-no-such-account-5f1c"
# base58 of 32 bytes (sha256 of "nearrpc conform: no such block"): a well-formed unknown hash
UNKNOWN_HASH = "81v2QWTQXkyafn62p64L4nJ1NWNnPLcJ7sh6sGigzvd8"
# far above any head, and a valid u64
FAR_AHEAD = 10**12


@dataclass(frozen=True, slots=True)
class SeenChunk:
    """A new chunk of a block near the final one: what the `chunk` forms ask for."""

    chunk_hash: str
    block_hash: str  # the block that included it
    height: int
    shard_id: int


@dataclass(frozen=True, slots=True)
class SeenTransaction:
    """A transaction of a chunk near the final block: what the `tx` forms ask for."""

    tx_hash: str
    signer_id: str
    public_key: str
    receipt_id: str | None  # the receipt its outcome names first (None: it named none)


@dataclass
class EndpointFacts:
    chain_id: str | None = None
    genesis_height: int | None = None
    genesis_accounts: tuple[str, ...] = ()  # validators and the treasury of the genesis config
    final_header: dict[str, Any] | None = None
    final_author: str | None = None
    account: str | None = None  # an existing account: --account, else the final block's author
    # a contract and one of its view methods (no arguments), --contract: its call must answer a result
    contract: tuple[str, str] | None = None
    absent_height: int | None = None  # a height below the head without a block (skipped, pruned, pre-genesis)
    first_results: dict[str, Any] = field(default_factory=dict)  # parameterless methods: the first result
    final_chunks: list[Any] = field(default_factory=list)  # the final block's chunk headers
    chunk: SeenChunk | None = None
    transaction: SeenTransaction | None = None

    @property
    def final_height(self) -> int | None:
        height = self.final_header.get("height") if self.final_header else None
        return height if isinstance(height, int) and not isinstance(height, bool) else None

    @property
    def final_hash(self) -> str | None:
        value = self.final_header.get("hash") if self.final_header else None
        return value if isinstance(value, str) else None

    @property
    def epoch_id(self) -> str | None:
        value = self.final_header.get("epoch_id") if self.final_header else None
        return value if isinstance(value, str) else None

    @property
    def far_height(self) -> int:
        return (self.final_height or 0) + FAR_AHEAD

    def learn_genesis(self, result: Any) -> None:
        if not isinstance(result, dict):
            return
        chain_id, height = result.get("chain_id"), result.get("genesis_height")
        self.chain_id = chain_id if isinstance(chain_id, str) else None
        self.genesis_height = height if isinstance(height, int) and not isinstance(height, bool) else None
        accounts = [v.get("account_id") for v in result.get("validators", []) if isinstance(v, dict)]
        accounts.append(result.get("protocol_treasury_account"))
        self.genesis_accounts = tuple(a for a in accounts if isinstance(a, str))

    def learn_final_block(self, result: Any) -> None:
        if isinstance(result, dict) and isinstance(result.get("header"), dict):
            self.final_header = result["header"]
            chunks = result.get("chunks")
            self.final_chunks = chunks if isinstance(chunks, list) else []
            author = result.get("author")
            self.final_author = author if isinstance(author, str) else None
