"""Helpers the tests share: a real server, JSON-RPC calls, store dumps and sample-chain facts."""
