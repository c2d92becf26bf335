"""Compiled contracts kept on disk, so a restarted server loads a known contract instead of
compiling it again (nearcore keeps its compiled contracts in a cache on disk too:
near-vm-runner cache.rs, keyed by the code hash, the VM config and the VM's version).

An entry is one file, `<key>.cwasm`, holding Wasmtime's serialized module (`Module.serialize`).
Its key is a SHA-256 over what makes the compiled bytes what they are: the code hash, the memory
the prepared module declares, the engine's settings, the wasmtime package's version and the
executor's own sources (preparation lives there), so any change of these compiles again.

Loading serialized bytes is only safe for bytes this engine wrote (Wasmtime runs them as native
code), so nothing is loaded unless it is authenticated: each entry carries an HMAC-SHA256 over
its key and its bytes, under a secret made once per cache folder (`secret.key`, 32 random bytes,
mode 0600). A truncated file (a process killed mid-write), a file of another wasmtime version,
a file copied from another key or swapped in by someone without the secret: each fails the check
(or Wasmtime's own compatibility check), is counted as rejected, and the module is compiled and
written again. Entries are written to a temporary file and renamed into place, so a reader sees
a whole entry or none. The folder is bounded by bytes: past the bound the least recently used
entries go. A folder that cannot be used (read-only, another owner, writable by others) leaves
the engine with its memory cache only, said once in the log.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib.metadata
import logging
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import wasmtime

log = logging.getLogger("nearrpc.contracts")

FORMAT: Final = b"nearrpc-compiled-2"  # 2: the gas instrumentation (instrument.py) replaced fuel
_MAGIC: Final = b"NRPCWM1\n"
_MAC_LEN: Final = 32
_SECRET_NAME: Final = "secret.key"
_SUFFIX: Final = ".cwasm"
_TEMP_PREFIX: Final = ".tmp-"
_STALE_TEMP_SECONDS: Final = 600  # a temporary file older than this was left by a process that died
DEFAULT_MAX_BYTES: Final = 1 << 30


class CacheUnavailable(Exception):
    """The folder cannot hold the cache; the message says why."""


@dataclass
class CacheStats:
    """What the cache did since it was opened."""

    loads: int = 0  # modules loaded from an entry (no compile)
    misses: int = 0  # no entry for the key
    rejected: int = 0  # entries that failed authentication or would not load (then rewritten)
    stores: int = 0  # entries written
    evicted: int = 0  # entries removed to stay within the byte bound
    write_failures: int = 0  # entries that could not be written (the folder went read-only, a full disk)


def executor_fingerprint(settings: Mapping[str, object]) -> bytes:
    """What, beside the code and its memory, decides a compiled module's bytes: the engine's
    settings, the wasmtime package's version, and the sources of this package (preparation)."""
    digest = hashlib.sha256(FORMAT)
    digest.update(f"wasmtime {importlib.metadata.version('wasmtime')}\n".encode())
    for name in sorted(settings):
        digest.update(f"{name}={settings[name]!r}\n".encode())
    package = Path(__file__).resolve().parent
    for source in sorted(package.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.digest()


class CompiledCache:
    """Compiled modules on disk under `folder`, at most `max_bytes` of entries; thread-safe, and
    shared safely by several processes (each write is a rename; the secret is made once)."""

    def __init__(self, folder: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.stats = CacheStats()
        self._lock = threading.Lock()
        self._secret = _open_folder(folder)
        self._warned_write = False
        self._remove_stale_temporaries()

    # -- keys and entries

    def key(self, code_hash: str, initial_pages: int, max_pages: int, fingerprint: bytes) -> str:
        material = b"\0".join([FORMAT, code_hash.encode(), b"%d" % initial_pages, b"%d" % max_pages, fingerprint])
        return hashlib.sha256(material).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}{_SUFFIX}"

    def _mac(self, key: str, payload: bytes) -> bytes:
        return hmac.new(self._secret, key.encode() + b"\0" + payload, hashlib.sha256).digest()

    def _count(self, name: str) -> None:
        with self._lock:
            setattr(self.stats, name, getattr(self.stats, name) + 1)

    # -- load and store

    def load(self, engine: wasmtime.Engine, key: str) -> wasmtime.Module | None:
        """The module kept under `key`, or None (no entry, or one that is not trusted or does not
        load: then it is removed, and the caller compiles and stores it again)."""
        path = self._path(key)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            self._count("misses")
            return None
        except OSError as failure:
            log.warning("compiled contract cache: cannot read %s (%s): compiling", path, failure)
            self._count("misses")
            return None
        header = len(_MAGIC) + _MAC_LEN
        payload = blob[header:]
        if (
            len(blob) <= header
            or blob[: len(_MAGIC)] != _MAGIC
            or not hmac.compare_digest(blob[len(_MAGIC) : header], self._mac(key, payload))
        ):
            self._reject(path, "it is not an entry this cache wrote (truncated, damaged or replaced)")
            return None
        try:
            # authenticated: bytes this cache's engine settings serialized (Wasmtime checks its
            # own version and settings again)
            module = wasmtime.Module.deserialize(engine, payload)
        except wasmtime.WasmtimeError as failure:
            self._reject(path, f"wasmtime does not load it ({str(failure).strip().splitlines()[0]})")
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        self._count("loads")
        return module

    def _reject(self, path: Path, why: str) -> None:
        log.warning("compiled contract cache: %s: %s; compiling it again", path.name, why)
        self._count("rejected")
        with contextlib.suppress(OSError):
            path.unlink()

    def store(self, key: str, module: wasmtime.Module) -> None:
        """Keep `module` under `key` (whole or not at all); a failure to write is logged once and
        otherwise ignored (the module serves from memory)."""
        payload = bytes(module.serialize())
        blob = _MAGIC + self._mac(key, payload) + payload
        if len(blob) > self.max_bytes:
            return
        try:
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=_TEMP_PREFIX, suffix=_SUFFIX)
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(blob)
                os.replace(temporary, self._path(key))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as failure:
            self._count("write_failures")
            if not self._warned_write:
                self._warned_write = True
                log.warning("compiled contract cache: cannot write to %s (%s): compiled contracts are kept in "
                            "memory only until it can", self.folder, failure)  # fmt: skip
            return
        self._count("stores")
        self._trim()

    # -- bounds and leftovers

    def entries(self) -> list[tuple[Path, int, float]]:
        """(path, size, last use) of every entry."""
        found = []
        with os.scandir(self.folder) as listing:
            for entry in listing:
                if entry.name.endswith(_SUFFIX) and not entry.name.startswith(_TEMP_PREFIX):
                    with contextlib.suppress(OSError):
                        info = entry.stat()
                        found.append((Path(entry.path), info.st_size, info.st_mtime))
        return found

    def _trim(self) -> None:
        entries = sorted(self.entries(), key=lambda entry: entry[2])
        total = sum(size for _, size, _ in entries)
        for path, size, _ in entries:
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                self._count("evicted")
            total -= size

    def _remove_stale_temporaries(self) -> None:
        cutoff = time.time() - _STALE_TEMP_SECONDS
        with contextlib.suppress(OSError), os.scandir(self.folder) as listing:
            for entry in listing:
                if entry.name.startswith(_TEMP_PREFIX):
                    with contextlib.suppress(OSError):
                        if entry.stat().st_mtime < cutoff:
                            os.unlink(entry.path)


def _open_folder(folder: Path) -> bytes:
    """The folder's secret, the folder made (mode 0700) and the secret created where absent;
    CacheUnavailable where the folder or its secret cannot be trusted or used."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except OSError as failure:
        raise CacheUnavailable(f"cannot create {folder}: {failure.strerror or failure}") from None
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise CacheUnavailable(f"{folder} is not this user's alone (its owner or others may write it)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CacheUnavailable(f"{folder} is not writable")
    secret_path = folder / _SECRET_NAME
    if not secret_path.exists():
        _create_secret(folder, secret_path)
    try:
        handle = os.open(secret_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(handle, "rb") as source:
            info = os.fstat(source.fileno())
            secret = source.read(_MAC_LEN + 1)
    except OSError as failure:
        raise CacheUnavailable(f"cannot read {secret_path}: {failure.strerror or failure}") from None
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or len(secret) != _MAC_LEN:
        raise CacheUnavailable(f"{secret_path} is not a secret of this user's alone (mode 0600, {_MAC_LEN} bytes)")
    return secret


def _create_secret(folder: Path, secret_path: Path) -> None:
    """Write a new secret beside, then link it into place: a process that finds the secret finds
    it whole, and of two processes creating it at once one link wins and both read that one."""
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=_TEMP_PREFIX)  # mode 0600
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(secrets.token_bytes(_MAC_LEN))
            with contextlib.suppress(FileExistsError):
                os.link(temporary, secret_path)
        finally:
            os.unlink(temporary)
    except OSError as failure:
        raise CacheUnavailable(f"cannot create {secret_path}: {failure.strerror or failure}") from None


def open_compiled_cache(folder: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> CompiledCache | None:
    """The cache in `folder`, or None (logged once: compiled contracts are kept in memory only)."""
    try:
        return CompiledCache(folder, max_bytes)
    except CacheUnavailable as why:
        log.warning("compiled contract cache off: %s; compiled contracts are kept in memory only", why)
        return None
