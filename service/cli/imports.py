"""The `nearrpc import` command group: genesis, blocks, rpc.

Heavy modules (ijson, httpx) are imported when a command runs, not when the parser is built.
Failures print one line (`nearrpc import <source>: ...`) with the exit code cli/refusals.py
gives; an interrupted import exits 130. Neither leaves a partial batch in the store.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from nearrpc.cli.flags import add_setting, given
from nearrpc.cli.logs import configure_logging
from nearrpc.cli.refusals import FAILED, INTERRUPTED, command_path, exit_code, refuse
from nearrpc.cli.settings import ImportLogSettings, RecorderSettings, StoreSettings, load_settings
from nearrpc.ingest.errors import ImportRequestError, IngestError
from nearrpc.nearcore.account_id import account_id_problem
from nearrpc.store import StoreError

if TYPE_CHECKING:
    from nearrpc.ingest.progress import Progress

_STORE_HELP = "store to import into; created when missing (the store `nearrpc serve` uses)"


def _add_store_flags(parser: argparse.ArgumentParser, cls: type[StoreSettings]) -> None:
    add_setting(parser, cls, "store", help_text=_STORE_HELP)
    add_setting(parser, cls, "store_timeout")


def _store(args: argparse.Namespace) -> StoreSettings:
    return load_settings(StoreSettings, given(args, "store", "store_timeout"))


def _progress(label: str, total: int | None, unit: str) -> Progress:
    """A bar on a terminal; progress log lines every NEARRPC_PROGRESS_EVERY seconds elsewhere."""
    from nearrpc.ingest.progress import Progress

    return Progress(label, total, unit, log_every=load_settings(ImportLogSettings, {}).progress_every)


def _print(lines: list[str]) -> None:
    for line in lines:
        print(line)


def _run_genesis(args: argparse.Namespace) -> None:
    from nearrpc.ingest.genesis_import import describe, ensure_readable, import_genesis

    for path in (args.path, args.records, args.client_config):
        if path is not None:
            ensure_readable(path)
    size = args.path.stat().st_size + (args.records.stat().st_size if args.records else 0)
    store = _store(args)
    summary = import_genesis(
        args.path, store.store, records_path=args.records, client_config_path=args.client_config,
        progress=_progress("genesis", size, "B"), options=store.store_options(),
    )
    _print(describe(summary, store.store))


def _run_blocks(args: argparse.Namespace) -> None:
    from nearrpc.ingest.blocks_import import describe, import_blocks

    store = _store(args)
    summary = import_blocks(args.path, store.store, progress=_progress("blocks", None, "items"),
                            options=store.store_options())
    _print(describe(summary, store.store))


def _accounts(text: str | None) -> tuple[str, ...]:
    """The ids of --accounts, each checked before the node is asked for it."""
    if not text:
        return ()
    accounts = tuple(dict.fromkeys(account.strip() for account in text.split(",") if account.strip()))
    for account in accounts:
        problem = account_id_problem(account)
        if problem is not None:
            raise ImportRequestError(f"--accounts: {account!r} is not a NEAR account id: {problem}")
    return accounts


def _run_rpc(args: argparse.Namespace) -> None:
    from nearrpc.ingest.recorder import Recording, describe, record
    from nearrpc.ingest.rpc_client import RetryPolicy

    settings = load_settings(RecorderSettings, given(args, *_RECORDER_FLAGS))
    recording = Recording(
        url=args.url, store=settings.store, from_height=args.from_height, to_height=args.to_height,
        accounts=_accounts(args.accounts), concurrency=settings.concurrency, batch_heights=settings.batch_heights,
        policy=RetryPolicy(retries=settings.retries, backoff=settings.backoff, timeout=settings.timeout),
        store_options=settings.store_options(),
    )
    total = args.to_height - args.from_height + 1
    summary = record(recording, _progress("recording", max(total, 0), "heights"))
    _print(describe(summary, recording))


def _height(text: str) -> int:
    """A block height flag: a non-negative integer (argparse turns the error into one line, exit 2)."""
    try:
        height = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if height < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative; heights start at 0")
    return height


def _node_url(text: str) -> str:
    if not text.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"{text!r}: expected an http:// or https:// URL")
    return text


def _run(args: argparse.Namespace) -> int:
    """Run the chosen import; turn every expected failure into one line and an exit code."""
    logs = load_settings(ImportLogSettings, {})
    configure_logging(logs.log_level, logs.log_format)
    command = command_path(args)
    try:
        args.run(args)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        refuse(command, "interrupted; the batch in progress was not stored (import rpc: the same command "
               "continues after the last stored batch)")
        return INTERRUPTED
    except (IngestError, StoreError) as exc:
        refuse(command, str(exc))
        return exit_code(exc)
    except OSError as exc:
        name = f"{exc.filename}: " if exc.filename else ""
        refuse(command, f"{name}{exc.strerror or exc}")
        return FAILED
    return 0


_RECORDER_FLAGS = ("store", "store_timeout", "concurrency", "batch_heights", "retries", "backoff", "timeout")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        "genesis", help="nearcore's genesis.json (config + accounts, access keys, contract code and state), streamed",
        description="Import nearcore's genesis.json: the config becomes the genesis_config answer (GenesisConfig "
        "fields in nearcore's order, defaults filled, legacy members dropped), every Account record an "
        "account state at the genesis height, every AccessKey record that account's access key there, and every "
        "Contract record its code (by hash), every Data record that contract's storage key and value there; other "
        "record kinds (receipts) are counted and skipped. "
        "The file is streamed, "
        "so multi-GB files import in bounded memory. No blocks are written (a genesis block's hash needs the "
        "state root).",
    )
    genesis.add_argument("path", type=Path, help="genesis.json")
    genesis.add_argument("--records", type=Path, help="a separate records file (a JSON array of records, "
                         "nearcore's genesis_records_file)")
    genesis.add_argument("--client-config", type=Path, help="a saved client_config result (bare or a "
                         "JSON-RPC response); without one, client_config answers INTERNAL_ERROR")
    _add_store_flags(genesis, StoreSettings)
    genesis.set_defaults(run=_run_genesis)

    blocks = sources.add_parser(
        "blocks", help="block views (and account views, protocol and genesis/client configs) from files",
        description="Import saved JSON-RPC answers from a JSON file (one item or an array of items), a JSON-lines "
        "file, or a folder of such files. An item is a bare result, a JSON-RPC response, or "
        '{"request": ..., "response": ...}; blocks, account views, protocol configs, genesis and client configs '
        "are told apart by shape. Blocks are served back byte for byte as given.",
    )
    blocks.add_argument("path", type=Path, help="a .json/.jsonl file or a folder of them")
    _add_store_flags(blocks, StoreSettings)
    blocks.set_defaults(run=_run_blocks)

    rpc = sources.add_parser(
        "rpc", help="record a height range (blocks, epochs, account states and keys) from a live node",
        description="Copy genesis_config, client_config, the blocks of a height range, the protocol config of "
        "every epoch met, and the states and access keys of chosen accounts at those blocks with their contracts' "
        "code, from a NEAR JSON-RPC endpoint. "
        "Batches of heights land one by one; a re-run of the same command continues after the last one.",
    )
    rpc.add_argument("--url", type=_node_url, required=True, help="the node's JSON-RPC URL")
    rpc.add_argument("--from-height", type=_height, required=True, help="first height to record")
    rpc.add_argument("--to-height", type=_height, required=True, help="last height to record (at most the node's "
                     "final block)")
    rpc.add_argument("--accounts", help="comma-separated account ids whose state and keys to record at every block")
    for field in _RECORDER_FLAGS[2:]:
        add_setting(rpc, RecorderSettings, field)
    _add_store_flags(rpc, RecorderSettings)
    rpc.set_defaults(run=_run_rpc)
