"""The `nearrpc import` command group: genesis, blocks, rpc.

Heavy modules (ijson, httpx, the store) are imported when a command runs, not when the
parser is built. Failures print one line (`nearrpc import: error: ...`) and exit 1; an
interrupted import exits 130. Neither leaves a partial batch in the store.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from service.settings import Settings

_ERROR_PREFIX = "nearrpc import: error:"


def _store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", type=Path, default=None,
        help="SQLite store to import into; created when missing (NEARRPC_STORE, default data/nearrpc.sqlite, "
        "the store `nearrpc serve` uses)",
    )


def _store(args: argparse.Namespace) -> Path:
    store: Path = args.store if args.store is not None else Settings().store
    return store


def _print(lines: list[str]) -> None:
    for line in lines:
        print(line)


def _run_genesis(args: argparse.Namespace) -> None:
    from service.ingest.genesis_import import describe, ensure_readable, import_genesis
    from service.ingest.progress import Progress

    for path in (args.path, args.records, args.client_config):
        if path is not None:
            ensure_readable(path)
    size = args.path.stat().st_size + (args.records.stat().st_size if args.records else 0)
    store = _store(args)
    summary = import_genesis(
        args.path, store, records_path=args.records, client_config_path=args.client_config,
        progress=Progress("genesis", size, "B"),
    )
    _print(describe(summary, store))


def _run_blocks(args: argparse.Namespace) -> None:
    from service.ingest.blocks_import import describe, import_blocks
    from service.ingest.progress import Progress

    store = _store(args)
    summary = import_blocks(args.path, store, progress=Progress("blocks", None, "items"))
    _print(describe(summary, store))


def _accounts(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(dict.fromkeys(account.strip() for account in text.split(",") if account.strip()))


def _run_rpc(args: argparse.Namespace) -> None:
    from service.ingest.errors import IngestError
    from service.ingest.progress import Progress
    from service.ingest.recorder import Recording, describe, record
    from service.ingest.rpc_client import RetryPolicy

    if args.concurrency < 1 or args.batch_heights < 1 or args.retries < 0 or args.backoff < 0 or args.timeout <= 0:
        raise IngestError("--concurrency and --batch-heights must be at least 1, --retries and --backoff not "
                          "negative, --timeout positive")
    if args.from_height < 0:
        raise IngestError("--from-height must not be negative")
    if not args.url.startswith(("http://", "https://")):
        raise IngestError(f"--url {args.url!r}: expected an http:// or https:// URL")
    recording = Recording(
        url=args.url, store=_store(args), from_height=args.from_height, to_height=args.to_height,
        accounts=_accounts(args.accounts), concurrency=args.concurrency, batch_heights=args.batch_heights,
        policy=RetryPolicy(retries=args.retries, backoff=args.backoff, timeout=args.timeout),
    )
    total = args.to_height - args.from_height + 1
    summary = record(recording, Progress("recording", max(total, 0), "heights"))
    _print(describe(summary, recording))


def _run(args: argparse.Namespace) -> int:
    """Run the chosen import; turn every expected failure into one line and an exit code."""
    from service.ingest.errors import IngestError, one_line
    from service.store import StoreError

    try:
        args.run(args)
    except KeyboardInterrupt:
        print(f"\n{_ERROR_PREFIX} interrupted; the batch in progress was not stored (import rpc: the same "
              "command continues after the last stored batch)", file=sys.stderr)
        return 130
    except (IngestError, StoreError) as exc:
        print(f"{_ERROR_PREFIX} {one_line(str(exc))}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:
        print(f"{_ERROR_PREFIX} store: {one_line(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:
        name = f"{exc.filename}: " if exc.filename else ""
        print(f"{_ERROR_PREFIX} {name}{exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def register_import_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `import genesis|blocks|rpc` to the `nearrpc` command parser."""
    group = commands.add_parser(
        "import", help="import real chain data into a store (genesis file, block files, a live node)",
        description="Bring real NEAR chain data into a store. Every value is validated against the "
        "interface spec before it is stored; an import lands whole or not at all (the recorder: batch by "
        "batch, resumable). See docs/IMPORTING.md.",
    )
    group.set_defaults(func=_run)
    sources = group.add_subparsers(dest="source", required=True, metavar="SOURCE")

    genesis = sources.add_parser(
        "genesis", help="nearcore's genesis.json (config + records), streamed",
        description="Import nearcore's genesis.json: the config becomes the genesis_config answer (GenesisConfig "
        "fields in nearcore's order, defaults filled, legacy members dropped) and every Account record an "
        "account state at the genesis height; other record kinds are counted and skipped. The file is streamed, "
        "so multi-GB files import in bounded memory. No blocks are written (a genesis block's hash needs the "
        "state root).",
    )
    genesis.add_argument("path", type=Path, help="genesis.json")
    genesis.add_argument("--records", type=Path, help="a separate records file (a JSON array of records, "
                         "nearcore's genesis_records_file)")
    genesis.add_argument("--client-config", type=Path, help="a saved client_config result (bare or a "
                         "JSON-RPC response); without one, client_config answers INTERNAL_ERROR")
    _store_option(genesis)
    genesis.set_defaults(run=_run_genesis)

    blocks = sources.add_parser(
        "blocks", help="block views (and account views, protocol and genesis/client configs) from files",
        description="Import saved JSON-RPC answers from a JSON file (one item or an array of items), a JSON-lines "
        "file, or a folder of such files. An item is a bare result, a JSON-RPC response, or "
        '{"request": ..., "response": ...}; blocks, account views, protocol configs, genesis and client configs '
        "are told apart by shape. Blocks are served back byte for byte as given.",
    )
    blocks.add_argument("path", type=Path, help="a .json/.jsonl file or a folder of them")
    _store_option(blocks)
    blocks.set_defaults(run=_run_blocks)

    rpc = sources.add_parser(
        "rpc", help="record a height range (blocks, epochs, account states) from a live node",
        description="Copy genesis_config, client_config, the blocks of a height range, the protocol config of "
        "every epoch met and the states of chosen accounts at those blocks from a NEAR JSON-RPC endpoint. "
        "Batches of heights land one by one; a re-run of the same command continues after the last one.",
    )
    rpc.add_argument("--url", required=True, help="the node's JSON-RPC URL")
    rpc.add_argument("--from-height", type=int, required=True, help="first height to record")
    rpc.add_argument("--to-height", type=int, required=True, help="last height to record (at most the node's "
                     "final block)")
    rpc.add_argument("--accounts", help="comma-separated account ids whose state to record at every block")
    rpc.add_argument("--concurrency", type=int, default=4, help="requests in flight at once (default 4)")
    rpc.add_argument("--batch-heights", type=int, default=50, help="heights per stored batch (default 50)")
    rpc.add_argument("--retries", type=int, default=5, help="retries of a request after transport errors, "
                     "HTTP 408/429/5xx, with exponential backoff (default 5)")
    rpc.add_argument("--backoff", type=float, default=0.5, help="seconds before the first retry, doubled for "
                     "each further one up to 10 s (default 0.5)")
    rpc.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    _store_option(rpc)
    rpc.set_defaults(run=_run_rpc)
