"""Chain storage: the reader/writer interfaces, and stores opened from a location.

    reader = open_store("data/nearrpc.sqlite", "serve")            # the server (awaitable)
    reader = open_store("postgresql://nearrpc@db/mainnet", "serve", StoreOptions(pool_size=8))
    with open_store(location, "write") as writer:                  # imports
        with writer.batch() as batch:
            batch.put_genesis_config(genesis_json)
            batch.put_block(block)

Which backend serves a location is this package's business: nothing outside it imports a
backend module, and every backend failure surfaces as `StoreError`.
"""

from nearrpc.store.base import (
    ANOTHER_STORE,
    SCHEMA_VERSION,
    STORE_KINDS,
    ChainReader,
    ChainWriter,
    CommitListener,
    ContractStateTooLarge,
    Reachability,
    ServingReader,
    StoreCheck,
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    StoreError,
    StoreInfo,
    StoreIntegrityError,
    StoreLocationError,
    StoreNotFoundError,
    StoreOptions,
    StoreSchemaError,
    StoreUnavailableError,
    StoreVersion,
    WriteBatch,
    block_from_view,
)
from nearrpc.store.fetch_budget import (
    CURRENT_FETCH_BUDGET,
    FETCHES_PER_CALL,
    FetchBudget,
    FetchCapReached,
    spend_fetch,
)
from nearrpc.store.held import (
    ACCOUNTS_CHOSEN,
    chosen_epoch_start,
    contract_state_not_held,
    held_account,
    kept_receipt,
    prefix_digest,
    recorded_changes,
    seen_access_key,
    seen_access_key_list,
    seen_account,
    seen_contract_state,
)
from nearrpc.store.locations import (
    StoreLocation,
    StoreMode,
    describe_location,
    is_file_location,
    open_store,
    upgrade_store,
)

__all__ = [
    "ACCOUNTS_CHOSEN",
    "ANOTHER_STORE",
    "CURRENT_FETCH_BUDGET",
    "FETCHES_PER_CALL",
    "SCHEMA_VERSION",
    "STORE_KINDS",
    "ChainReader",
    "ChainWriter",
    "CommitListener",
    "ContractStateTooLarge",
    "FetchBudget",
    "FetchCapReached",
    "Reachability",
    "ServingReader",
    "StoreCheck",
    "StoreError",
    "StoreInfo",
    "StoreIntegrityError",
    "StoreLocation",
    "StoreLocationError",
    "StoreMode",
    "StoreNotFoundError",
    "StoreOptions",
    "StoreSchemaError",
    "StoreUnavailableError",
    "StoreVersion",
    "StoredBlock",
    "StoredChunk",
    "StoredEpoch",
    "StoredReceipt",
    "StoredTransaction",
    "StoredValidators",
    "WriteBatch",
    "block_from_view",
    "chosen_epoch_start",
    "contract_state_not_held",
    "describe_location",
    "held_account",
    "is_file_location",
    "kept_receipt",
    "open_store",
    "prefix_digest",
    "recorded_changes",
    "seen_access_key",
    "seen_access_key_list",
    "seen_account",
    "seen_contract_state",
    "spend_fetch",
    "upgrade_store",
]
