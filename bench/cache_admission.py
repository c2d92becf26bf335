"""The answer cache's admission rule against plain LRU, on simulated key streams (no server):

    python -m bench.cache_admission [--keys 200000] [--requests 400000] [--answer-bytes 5000]

Prints, per stream, the hit rate after a warm-up quarter and the time a request spends in the
cache (get, and put on a miss), for the service's AnswerCache (LRU with a doorkeeper) and for a
plain byte-bounded LRU of the same budget. Streams: uniform over all keys (no policy can beat
budget / working set there; what differs is the cost of a miss), Zipf-like with exponent 0.9
and 1.1 (a hot head and a long tail, as real traffic), and a hot set of 1,000 keys asked 80% of
the time beside one-off keys.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import os
import random
import time
from collections.abc import Callable, Hashable

from cachetools import LRUCache

from nearrpc.http.app import DEFAULT_ANSWER_CACHE_BYTES as ANSWER_CACHE_BYTES
from nearrpc.methods.answers import AnswerCache

Stream = list[int]


class _PlainLru:
    """What the answer cache was before the admission rule: an LRU bounded by bytes."""

    def __init__(self, max_bytes: int) -> None:
        self._entries: LRUCache[Hashable, bytes] = LRUCache(max_bytes, getsizeof=lambda answer: len(answer) + 640)

    def get(self, key: Hashable) -> bytes | None:
        return self._entries.get(key)

    def put(self, key: Hashable, answer: bytes, kinds: frozenset[str]) -> None:
        self._entries[key] = bytes(memoryview(answer))


def zipf(keys: int, count: int, exponent: float, rng: random.Random) -> Stream:
    cumulative = list(itertools.accumulate(1 / (rank + 1) ** exponent for rank in range(keys)))
    return [bisect.bisect(cumulative, rng.random() * cumulative[-1]) for _ in range(count)]


def hot_and_once(keys: int, count: int, rng: random.Random) -> Stream:
    return [rng.randrange(1000) if rng.random() < 0.8 else 1000 + rng.randrange(keys) for _ in range(count)]


def replay(make: Callable[[int], AnswerCache | _PlainLru], stream: Stream, answer: bytes) -> tuple[float, float]:
    """Hit rate after the first quarter, and microseconds a request in the cache."""
    cache = make(ANSWER_CACHE_BYTES)
    kinds = frozenset({"blocks"})
    warm = len(stream) // 4
    hits = 0
    started = time.perf_counter()
    for index, key in enumerate(stream):
        if cache.get(key) is None:
            cache.put(key, answer, kinds)
        elif index >= warm:
            hits += 1
    return hits / (len(stream) - warm), (time.perf_counter() - started) / len(stream) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--requests", type=int, default=400_000)
    parser.add_argument("--answer-bytes", type=int, default=5_000, help="about a block's answer")
    args = parser.parse_args()
    rng = random.Random(21)
    answer = os.urandom(args.answer_bytes)
    streams = {
        "uniform": [rng.randrange(args.keys) for _ in range(args.requests)],
        "zipf 0.9": zipf(args.keys, args.requests, 0.9, rng),
        "zipf 1.1": zipf(args.keys, args.requests, 1.1, rng),
        "80% on 1,000 hot keys": hot_and_once(args.keys, args.requests, rng),
    }
    print(f"budget {ANSWER_CACHE_BYTES >> 20} MiB, answers of {args.answer_bytes} bytes, {args.keys} keys")
    print(f"{'stream':24} {'hit rate LRU':>12} {'admission':>10} {'us/request LRU':>15} {'admission':>10}")
    for name, stream in streams.items():
        lru_hits, lru_us = replay(_PlainLru, stream, answer)
        hits, us = replay(AnswerCache, stream, answer)
        print(f"{name:24} {lru_hits:12.3f} {hits:10.3f} {lru_us:15.2f} {us:10.2f}")


if __name__ == "__main__":
    main()
