"""The service's own version and the interface version it implements."""

from __future__ import annotations

from importlib import metadata

INTERFACE_VERSION = "1.2.14"

try:
    SERVICE_VERSION = metadata.version("nearrpc")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    SERVICE_VERSION = "0+unknown"
