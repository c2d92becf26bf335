"""Chain storage: the reader/writer interfaces and the SQLite implementation.

Use `open_reader` in the server, `create`/`open_writer` in imports:

    with create(path) as writer:
        with writer.batch() as batch:
            batch.put_genesis_config(genesis_json)
            batch.put_block(block)
"""

from service.store.base import (
    EPOCH_CONFIG_KEYS,
    SCHEMA_VERSION,
    ZERO_HASH,
    ChainReader,
    ChainWriter,
    StoredBlock,
    StoredEpoch,
    StoreError,
    StoreInfo,
    StoreIntegrityError,
    StoreNotFoundError,
    StoreSchemaError,
    WriteBatch,
)
from service.store.sqlite import (
    SqliteChainReader,
    SqliteChainWriter,
    create,
    open_reader,
    open_writer,
)

__all__ = [
    "EPOCH_CONFIG_KEYS",
    "SCHEMA_VERSION",
    "ZERO_HASH",
    "ChainReader",
    "ChainWriter",
    "SqliteChainReader",
    "SqliteChainWriter",
    "StoreError",
    "StoreInfo",
    "StoreIntegrityError",
    "StoreNotFoundError",
    "StoreSchemaError",
    "StoredBlock",
    "StoredEpoch",
    "WriteBatch",
    "create",
    "open_reader",
    "open_writer",
]
