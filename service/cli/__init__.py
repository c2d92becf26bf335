"""The `nearrpc` command: its sub-commands and the settings they read."""
