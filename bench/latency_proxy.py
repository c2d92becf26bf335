"""A TCP proxy on loopback that delays every chunk by a fixed time in each direction: a database
"on another host" for benchmarks, where `tc netem` is not available (this machine's kernel has
no qdisc support).

    python -m bench.latency_proxy --port 6543 --to 5432 --delay-ms 0.25

A round trip through it takes 2 x delay longer; chunks keep their order and are not limited in
bandwidth (a delay line, as a link of that latency). Loopback only. Prints `listening PORT` when
ready; stops on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    loop = asyncio.get_running_loop()
    try:
        while chunk := await reader.read(65536):
            # a constant delay keeps the order: each chunk is written `delay` after it arrived
            loop.call_at(loop.time() + delay, writer.write, chunk)
        await asyncio.sleep(delay)
    finally:
        with contextlib.suppress(OSError):
            writer.close()


async def _serve(port: int, target: int, delay: float) -> None:
    async def connect(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(
            _pipe(client_reader, server_writer, delay), _pipe(server_reader, client_writer, delay),
            return_exceptions=True,
        )  # fmt: skip

    server = await asyncio.start_server(connect, "127.0.0.1", port)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="where to listen on 127.0.0.1 (0: any free port)")
    parser.add_argument("--to", type=int, required=True, help="the port on 127.0.0.1 to forward to")
    parser.add_argument("--delay-ms", type=float, required=True, help="added in each direction")
    args = parser.parse_args()
    if args.delay_ms < 0:
        parser.error("--delay-ms must be at least 0")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port, args.to, args.delay_ms / 1000))


if __name__ == "__main__":
    main()
