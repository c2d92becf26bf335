"""bench.near_sdk_layout's near-sdk collections and bench.real_contracts_store's plan, without a
contract: TreeMap's nodes form the AVL tree its inserts build, the plan is the same at every call
(tests/contracts/test_real_contracts.py reads the contracts' own views over them)."""

from __future__ import annotations

import pytest

from bench import near_sdk_layout as sdk
from bench.real_contracts_store import RealContracts, Shape, plan

SHAPE = Shape(holders=50, nfts=20, statuses=10)


def test_the_plan_is_the_same_at_every_call() -> None:
    contracts = plan(SHAPE)
    assert plan(Shape(holders=50, nfts=20, statuses=10)) == contracts and isinstance(contracts, RealContracts)
    assert len(contracts.balances) == 50 and len(contracts.tokens) == 20 and len(contracts.statuses) == 10
    assert contracts.total_supply == sum(contracts.balances.values()) > 0
    with pytest.raises(ValueError, match="statuses no more than holders"):
        plan(Shape(holders=5, nfts=0, statuses=6))


def _check_avl(nodes: dict[int, tuple[bytes, int | None, int | None, int]], at: int | None) -> tuple[list[bytes], int]:
    """In-order keys and height of the subtree at `at`; asserts each stored height and balance."""
    if at is None:
        return [], 0
    key, lft, rgt, height = nodes[at]
    left, left_height = _check_avl(nodes, lft)
    right, right_height = _check_avl(nodes, rgt)
    assert height == 1 + max(left_height, right_height) and abs(left_height - right_height) <= 1
    return [*left, key, *right], height


def _decode(node: bytes) -> tuple[int, tuple[bytes, int | None, int | None, int]]:
    ident, size = int.from_bytes(node[:8], "little"), int.from_bytes(node[8:12], "little")
    rest = node[12 + size :]

    def link(data: bytes) -> tuple[int | None, bytes]:
        return (None, data[1:]) if data[0] == 0 else (int.from_bytes(data[1:9], "little"), data[9:])

    lft, rest = link(rest)
    rgt, rest = link(rest)
    assert len(rest) == 8
    return ident, (node[12 : 12 + size], lft, rgt, int.from_bytes(rest, "little"))


@pytest.mark.parametrize("keys", [[str(i) for i in range(100)], [str(i) for i in range(99, -1, -1)],
                                  [f"k{(i * 37) % 101}" for i in range(101)]])  # fmt: skip
def test_tree_map_is_an_avl_tree_of_its_keys(keys: list[str]) -> None:
    """TreeMap's nodes after in-order, reverse and scattered inserts: ids in insert order, each
    node's stored height right, balanced, the in-order walk sorted (what `nft_tokens` pages)."""
    structure, records = sdk.tree_map(b"\x00", [(key, sdk.string("owner.localnet")) for key in keys])
    nodes = dict(_decode(value) for key, value in records if key.startswith(b"\x00n"))
    assert sorted(nodes) == list(range(len(keys)))
    assert [nodes[i][0] for i in range(len(keys))] == [key.encode() for key in keys]
    root = int.from_bytes(structure[:8], "little")
    walked, height = _check_avl(nodes, root)
    assert walked == sorted(key.encode() for key in keys)
    assert height <= 8  # an AVL tree of 101 keys is at most 1.44 log2(n) high
    assert structure[8:] == sdk.vec(b"\x00v") + sdk.u64(len(keys)) + sdk.vec(b"\x00n")
