"""Several uvicorn worker processes, each accepting on a listening socket of its own.

uvicorn's own supervisor gives every worker the same socket, and a worker that wakes up first
accepts a whole burst of connections: measured with 8 connections and 2 workers, one worker
sometimes got all 8 and the other none, and the pair served less than one worker alone. Here
each worker has its own socket on the same port (SO_REUSEPORT), and the kernel spreads new
connections over the sockets evenly. A worker that dies is started again on its socket;
SIGINT and SIGTERM stop them all. What a worker must know before it builds its app (settings
with credentials in them) reaches it with its arguments, on multiprocessing's pipe: not in its
environment nor its command line, which other processes can read.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Generator
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any, Final

import uvicorn

log = logging.getLogger("nearrpc.serve")

STARTUP_FAILURE: Final = 3  # uvicorn's exit status for a worker that could not start
_STOP_SECONDS: Final = 30.0


class StoppableServer(uvicorn.Server):
    """uvicorn's server, whose stop by SIGTERM ends `serve` with exit 0 (the README's "served
    until stopped"), as the worker pool's does: uvicorn re-raises the SIGTERM it handled once it
    has shut down, so the process died by the signal (status 143), except as a container's PID 1.
    SIGINT is still re-raised: `serve` takes its KeyboardInterrupt as the stop it is."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        with super().capture_signals():
            yield
            self._captured_signals = [sig for sig in self._captured_signals if sig != signal.SIGTERM]


def claim_port(family: socket.AddressFamily, host: str, port: int) -> int:
    """The port, once no other socket holds it: a bind without SO_REUSEPORT fails while any
    socket is bound there, including another server's SO_REUSEPORT group, which would
    otherwise let this server join it and take a share of its connections. Port 0: a free one."""
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT leftovers are no owner
        probe.bind((host, port))
        bound: int = probe.getsockname()[1]
        return bound


def address_family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def reuse_port_sockets(host: str, port: int, count: int, backlog: int) -> list[socket.socket]:
    """`count` listening sockets on one port (port 0: a free one); with one, a plain socket.

    A group is bound only after `claim_port`: two servers started in the same instant could still
    both pass it, but a server started beside a running one is refused.
    """
    family = address_family(host)
    if count > 1:
        port = claim_port(family, host, port)
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if count > 1:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            sock.listen(backlog)
            sock.set_inheritable(True)
            port = sock.getsockname()[1]
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


_PR_SET_PDEATHSIG: Final = 1  # prctl(2)


def _end_with(parent: int) -> None:
    """SIGTERM (uvicorn's graceful stop) to this worker when `parent` ends, however it ends:
    a supervisor killed with SIGKILL would otherwise leave its workers serving, holding the
    port that its restart is then refused. Linux only; elsewhere workers outlive a killed
    supervisor, as uvicorn's own do."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) != 0:
        log.warning("worker %s will not stop with its supervisor: prctl failed (errno %s)", os.getpid(),
                    ctypes.get_errno())  # fmt: skip
    elif os.getppid() != parent:  # it ended before the request was made
        os.kill(os.getpid(), signal.SIGTERM)


# (function, argument): called in each worker before its app is built; the function must be
# importable by name (multiprocessing's spawn pickles it by reference)
Prepare = tuple[Callable[[Any], None], Any]


def _serve_one(config: uvicorn.Config, sock: socket.socket, parent: int, prepare: Prepare | None) -> None:
    _end_with(parent)
    if prepare is not None:
        prepare[0](prepare[1])
    config.configure_logging()  # a spawned interpreter starts with none
    uvicorn.Server(config).run(sockets=[sock])


class WorkerPool:
    """One process per socket, kept running until asked to stop."""

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket], prepare: Prepare | None = None) -> None:
        self._config = config
        self._prepare = prepare
        self._sockets = sockets
        self._context = multiprocessing.get_context("spawn")  # a fresh interpreter, as uvicorn's workers
        self._stop = threading.Event()

    def _start(self, index: int) -> BaseProcess:
        process = self._context.Process(
            target=_serve_one, args=(self._config, self._sockets[index], os.getpid(), self._prepare)
        )
        process.start()
        return process

    def _ask_to_stop(self, signum: int, frame: FrameType | None) -> None:
        self._stop.set()

    def run(self) -> int:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._ask_to_stop)
        processes = [self._start(index) for index in range(len(self._sockets))]
        status = 0
        while not self._stop.wait(0.5):
            for index, process in enumerate(processes):
                if process.is_alive():
                    continue
                if process.exitcode == STARTUP_FAILURE:
                    log.error("worker %s could not start; stopping", process.pid)
                    self._stop.set()
                    status = 1
                    break
                log.warning("worker %s ended (exit status %s); starting another", process.pid, process.exitcode)
                processes[index] = self._start(index)
        for process in processes:
            if process.is_alive() and process.pid is not None:
                process.terminate()  # SIGTERM: uvicorn's graceful shutdown
        for process in processes:
            process.join(_STOP_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()
        return status
