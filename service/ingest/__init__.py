"""Imports of real chain data into a store, each validated against the spec on the way in:

- `genesis_import`: nearcore's genesis.json, streamed (config + Account records);
- `blocks_import`: saved JSON-RPC answers (blocks, account views, protocol/genesis/client
  configs) from JSON, JSON-lines files or folders;
- `recorder`: a height range copied from a live node, batch by batch, resumable.

`cli` registers them as `nearrpc import genesis|blocks|rpc`. See docs/IMPORTING.md.
"""
