"""nearrpc: a NEAR node's read-only JSON-RPC query interface, answered from a store.

The rooms, along the data flow (ARCHITECTURE.md has the rules a tool checks):
- read path: `http` (ASGI app, JSON-RPC endpoint, envelope, params, wire format, ops routes)
  -> `methods` (the five handlers, block references, error catalogue, protocol config)
  -> `store` (ChainReader / ChainWriter, opened from a location);
- write path: `ingest` (genesis files, saved answers, a live-node recorder) and `sample` (the
  embedded localnet), both through ChainWriter;
- shared: `nearcore` (facts about nearcore both paths rely on), `runtime_params` (protocol
  parameters, a leaf), `spec` (the packaged interface description), `generated` (code and data
  generated from the spec, never edited by hand);
- `cli`: the `nearrpc` command and its settings.
"""
