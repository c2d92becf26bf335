"""What a worker does once its application has started: the objects loaded so far (the app, the
models, the spec, the parameter tables) are frozen out of the garbage collector's full passes,
which walked them in about 27 ms and set the tail latency under load (docs/BENCHMARKS.md)."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from nearrpc.http.app import build_app
from nearrpc.store import open_store


def test_starting_the_app_freezes_what_it_loaded(sample_store: Path) -> None:
    app = build_app(open_store(sample_store, "serve"))

    async def start_and_stop() -> int:
        async with app.router.lifespan_context(app):
            return gc.get_freeze_count()

    gc.unfreeze()
    try:
        frozen = asyncio.run(start_and_stop())
        assert frozen > 10_000  # the objects loaded at start (about 78,000 in a server)
    finally:
        gc.unfreeze()
