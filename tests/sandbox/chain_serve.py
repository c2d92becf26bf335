"""`nearrpc serve` with the chain writer's stand-in runtime (tests/sandbox/chain_fakes.py) in
place of the sandbox's own: run as `python tests/sandbox/chain_serve.py <command ...> serve ARGS`
(the `wrapper` of tests.support.serve_process.serving), it serves `serve ARGS` in this process.
With POLL_SECONDS in its environment, a PostgreSQL store's reader polls the change counters that
rarely on its own (a test then sees what the chain writer's notices alone make visible)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for `tests`

from nearrpc.cli import serve
from nearrpc.cli.main import main
from nearrpc.store import postgres_serving

if __name__ == "__main__":
    setattr(serve, "SANDBOX_RUNTIME", ("tests.sandbox.chain_fakes", "TransferRuntime"))  # noqa: B010
    if "POLL_SECONDS" in os.environ:
        setattr(postgres_serving, "POLL_SECONDS", float(os.environ["POLL_SECONDS"]))  # noqa: B010
    raise SystemExit(main(sys.argv[sys.argv.index("serve") :]))
