"""Small JSON files holding one config result (bare or as a JSON-RPC response)."""

from __future__ import annotations

from pathlib import Path

from nearrpc.ingest import jsonio
from nearrpc.ingest.errors import IngestError, located
from nearrpc.ingest.shapes import ClientConfigItem, ShapeError, classify


def read_client_config(path: Path) -> bytes:
    """The compact `client_config` result held by `path`."""
    try:
        value = jsonio.loads(path.read_bytes())
    except OSError as exc:
        raise IngestError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise located(f"{path}", f"invalid JSON: {exc}") from None
    try:
        item = classify(value)
    except ShapeError as exc:
        raise located(f"{path}", exc) from None
    if not isinstance(item, ClientConfigItem):
        raise IngestError(f"{path}: not a client_config result (it is {jsonio.json_kind(item)})")
    return jsonio.compact(item.config)
