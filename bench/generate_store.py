"""Write a big synthetic store: `python -m bench.generate_store STORE [--blocks N] [--accounts M]
[--states K]` (defaults: the issue's 1,000,000 blocks, 100,000 accounts x 10 states). STORE
is an SQLite path or a postgresql:// URL; what is validated is said in
nearrpc/sample/synthetic.py. Prints the rows written per second."""

from __future__ import annotations

import argparse
import time

from nearrpc.ingest.progress import Progress
from nearrpc.sample.synthetic import SyntheticShape, write_synthetic_chain
from nearrpc.store import describe_location


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("store")
    parser.add_argument("--blocks", type=int, default=1_000_000)
    parser.add_argument("--accounts", type=int, default=100_000)
    parser.add_argument("--states", type=int, default=10)
    args = parser.parse_args()
    shape = SyntheticShape(args.blocks, args.accounts, args.states)
    rows = shape.blocks + shape.accounts * shape.states
    progress = Progress("generating", rows, "rows")
    started = time.monotonic()
    try:
        write_synthetic_chain(args.store, shape, lambda done: progress.update(advance=done))
    finally:
        progress.close()
    seconds = time.monotonic() - started
    print(f"wrote {shape.blocks} blocks and {shape.accounts} x {shape.states} account states to "
          f"{describe_location(args.store)} in {seconds:.0f} s ({rows / seconds:.0f} rows/s)")


if __name__ == "__main__":
    main()
