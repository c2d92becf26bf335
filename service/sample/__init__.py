"""The embedded sample chain: a deterministic NEAR localnet served by default.

- `build_sample_store(path)` writes it into a new SQLite store (atomically);
  `ensure_sample_store(path)` does so only when the file is missing.
- `sample_chain()` returns the generated data in memory; `sample_facts()` describes it
  (heights, hashes, epochs, accounts) for tests.
"""

from service.sample.build import build_sample_store, ensure_sample_store, write_chain
from service.sample.facts import EpochFacts, SampleFacts, derive_facts, sample_chain, sample_facts
from service.sample.generator import AccountStateRow, SampleChain, generate_sample_chain

__all__ = [
    "AccountStateRow",
    "EpochFacts",
    "SampleChain",
    "SampleFacts",
    "build_sample_store",
    "derive_facts",
    "ensure_sample_store",
    "generate_sample_chain",
    "sample_chain",
    "sample_facts",
    "write_chain",
]
