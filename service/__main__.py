"""`python -m nearrpc`: the `nearrpc` command."""

from nearrpc.cli.entry import main

raise SystemExit(main())
