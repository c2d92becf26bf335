"""`python -m nearrpc`: the `nearrpc` command."""

from nearrpc.cli.main import main

raise SystemExit(main())
