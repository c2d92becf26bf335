"""Service settings: command-line options fall back to NEARRPC_* environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_STORE = Path("data") / "nearrpc.sqlite"


def _env(name: str, default: str) -> str:
    return os.environ.get(f"NEARRPC_{name}", default)


@dataclass(frozen=True)
class Settings:
    host: str = field(default_factory=lambda: _env("HOST", "127.0.0.1"))
    port: int = field(default_factory=lambda: int(_env("PORT", "3030")))
    store: Path = field(default_factory=lambda: Path(_env("STORE", str(DEFAULT_STORE))))
    workers: int = field(default_factory=lambda: int(_env("WORKERS", "1")))
    log_level: str = field(default_factory=lambda: _env("LOG_LEVEL", "info"))
    access_log: bool = field(default_factory=lambda: _env("ACCESS_LOG", "0") == "1")
    # "*" (the default, as nearcore's) allows any origin; else a comma-separated list
    cors_origins: tuple[str, ...] = field(
        default_factory=lambda: tuple(o.strip() for o in _env("CORS_ORIGINS", "*").split(",") if o.strip())
    )

    def to_env(self) -> dict[str, str]:
        """The environment that reproduces these settings in a worker process."""
        return {
            "NEARRPC_HOST": self.host,
            "NEARRPC_PORT": str(self.port),
            "NEARRPC_STORE": str(self.store),
            "NEARRPC_WORKERS": str(self.workers),
            "NEARRPC_LOG_LEVEL": self.log_level,
            "NEARRPC_ACCESS_LOG": "1" if self.access_log else "0",
            "NEARRPC_CORS_ORIGINS": ",".join(self.cors_origins),
        }
