"""The HTTP room: the ASGI application, the JSON-RPC endpoint and nearcore's wire format."""
