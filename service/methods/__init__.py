"""The five JSON-RPC methods over a store, with nearcore's semantics; nothing here knows HTTP."""
