"""The answer cache: bounded by bytes, and a change drops exactly the answers computed from it."""

from __future__ import annotations

import tracemalloc

import orjson
import pytest

from nearrpc.methods import errors
from nearrpc.methods.answers import AnswerCache, depends_on
from nearrpc.methods.blocks import BlockReference
from nearrpc.store import ANOTHER_STORE, StoreVersion

HASH = "4reLvkAWfqk5fsqio1KLudk46cqRz9erQdaHkWZKMJDZ"
FINAL = BlockReference("finality", "final")
BY_HASH = BlockReference("block_id", HASH)
BY_HEIGHT = BlockReference("block_id", 5)


@pytest.mark.parametrize(
    ("method", "reference", "kinds"),
    [
        ("genesis_config", None, {"configs"}),
        ("client_config", None, {"configs"}),
        ("block", FINAL, {"blocks"}),
        ("block", BY_HEIGHT, {"blocks"}),
        ("block", BY_HASH, set()),  # a block found by hash is the same block forever
        ("EXPERIMENTAL_protocol_config", FINAL, {"blocks", "epochs", "configs"}),
        ("EXPERIMENTAL_protocol_config", BY_HASH, {"epochs", "configs"}),
        ("EXPERIMENTAL_view_account", BY_HEIGHT, {"blocks", "accounts"}),
        ("EXPERIMENTAL_view_account", BY_HASH, {"accounts"}),
    ],
)
def test_results_depend_on_what_they_were_read_from(
    method: str, reference: BlockReference | None, kinds: set[str]
) -> None:
    assert depends_on(method, reference, b"{}") == frozenset(kinds)


def test_errors_depend_on_what_could_make_them_go_away() -> None:
    unknown = errors.unknown_block("block", BY_HASH, f"BLOCK: {HASH}", 10)
    assert depends_on("block", BY_HASH, unknown) == frozenset({"blocks"})  # the block may be imported later
    account = errors.unknown_account("x.near", 5, HASH)
    assert depends_on("EXPERIMENTAL_view_account", BY_HASH, account) == frozenset({"blocks", "accounts"})
    assert depends_on("block", None, errors.parse_error("Failed parsing args: ...")) == frozenset()
    assert depends_on("block", FINAL, errors.internal_error("disk on fire")) is None  # never kept


def test_forget_drops_exactly_the_answers_of_the_changed_kinds() -> None:
    cache = AnswerCache(1 << 20)
    cache.put("head", b"head", frozenset({"blocks"}))
    cache.put("account", b"account", frozenset({"blocks", "accounts"}))
    cache.put("genesis", b"genesis", frozenset({"configs"}))
    cache.put("by-hash", b"by-hash", frozenset())
    cache.forget(frozenset({"accounts"}))
    assert [cache.get(k) for k in ("head", "account", "genesis", "by-hash")] == [b"head", None, b"genesis", b"by-hash"]
    cache.forget(frozenset({"blocks", "configs", "epochs"}))
    assert [cache.get(k) for k in ("head", "genesis", "by-hash")] == [None, None, b"by-hash"]


def test_another_store_drops_every_answer_even_one_that_holds_forever_within_a_store() -> None:
    """A store file replaced while served (StoreVersion.generation): a block found by hash in the
    old file may be missing from the new one, or belong to another chain."""
    cache = AnswerCache(1 << 20)
    cache.put("by-hash", b"by-hash", frozenset())
    cache.put("head", b"head", frozenset({"blocks"}))
    before = StoreVersion(configs=1, blocks=1, epochs=1, accounts=1)
    replaced = StoreVersion(configs=1, blocks=1, epochs=1, accounts=1, generation=1)
    changed = replaced.changed_since(before)
    assert changed == {"configs", "blocks", "epochs", "accounts", "access_keys", "codes", "contract_data", "chunks",
                       "transactions", "receipts", "validators", ANOTHER_STORE}
    cache.forget(changed)
    assert [cache.get(k) for k in ("by-hash", "head")] == [None, None]


def test_the_cache_is_bounded_by_the_bytes_it_holds() -> None:
    cache = AnswerCache(10_000)
    for index in range(100):
        cache.put(index, b"x" * 1000, frozenset())
        cache.put(index, b"x" * 1000, frozenset())  # asked twice: admitted even when full
    kept = [index for index in range(100) if cache.get(index) is not None]
    assert 0 < len(kept) <= 10 and kept == list(range(100 - len(kept), 100))  # the most recent ones
    cache.put("huge", b"x" * 20_000, frozenset())  # larger than the whole budget: not kept
    assert cache.get("huge") is None and cache.get(99) is not None


def test_a_full_cache_keeps_its_hot_answers_through_a_flood_of_keys_asked_once() -> None:
    """Real traffic: most keys come once. Plain LRU let each one evict a hot answer."""
    cache = AnswerCache(10 * (1000 + 640))
    hot = [f"hot {index}" for index in range(10)]
    for key in hot:
        cache.put(key, b"h" * 1000, frozenset())
    for index in range(5000):
        key = hot[index % 10]  # each hot key is asked every tenth request
        assert cache.get(key) == b"h" * 1000, (index, key)
        cache.put(f"once {index}", b"o" * 1000, frozenset())
    assert all(cache.get(f"once {index}") is None for index in range(5000))
    cache.put("once 4999", b"o" * 1000, frozenset())  # its second time: in, in place of the coldest
    assert cache.get("once 4999") == b"o" * 1000
    assert sum(cache.get(key) is not None for key in hot) == 9


def test_a_zero_budget_keeps_nothing() -> None:
    cache = AnswerCache(0)
    cache.put("k", b"v", frozenset())
    assert cache.get("k") is None


def test_the_memory_held_is_about_what_the_budget_counts() -> None:
    # answers often come from orjson, whose bytes keep a 4 KiB buffer whatever their length:
    # kept as they are, 2,000 small answers would hold 8 MiB instead of about 1.3 MiB
    def answer(index: int) -> bytes:
        return orjson.dumps({"amount": str(index), "block_height": index})

    cache = AnswerCache(64 << 20)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for index in range(2000):
            cache.put(("EXPERIMENTAL_view_account", str(index).encode()), answer(index), frozenset({"accounts"}))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    counted = sum(len(answer(index)) + 640 for index in range(2000))
    assert held <= counted, (held, counted)
    assert cache.get(("EXPERIMENTAL_view_account", b"1999")) == answer(1999)


def test_dropped_and_replaced_answers_give_their_bytes_back() -> None:
    """The cache counts its own bytes: what `forget` drops, or a put replaces, is room again, so
    new answers get in at their first request instead of meeting the doorkeeper."""
    cache = AnswerCache(4 * (1000 + 640))
    for index in range(4):
        cache.put(index, b"x" * 1000, frozenset({"blocks"}))
    cache.put(0, b"y" * 1000, frozenset({"blocks"}))  # replaced in place: still four answers
    assert [cache.get(index) for index in range(4)] == [b"y" * 1000] + [b"x" * 1000] * 3
    cache.put("full", b"z" * 1000, frozenset())
    assert cache.get("full") is None  # full: refused at its first request
    cache.forget(frozenset({"blocks"}))
    for index in range(4):
        cache.put(f"new {index}", b"n" * 1000, frozenset())
    assert all(cache.get(f"new {index}") == b"n" * 1000 for index in range(4))
