"""The embedded sample chain: a deterministic NEAR localnet served by default.

- `build_sample_store(location)` writes it into a new store (atomically);
- `sample_chain()` returns the generated data in memory.
"""

from nearrpc.sample.build import build_sample_store, sample_chain, write_chain
from nearrpc.sample.generator import AccountStateRow, ContractDataRow, SampleChain

__all__ = ["AccountStateRow", "ContractDataRow", "SampleChain", "build_sample_store", "sample_chain", "write_chain"]
