"""nearcore's merkle tree over a list (core/primitives merklize) and each item's path.

Leaves are SHA-256 of each item's bytes; a pair combines as SHA-256 of the two hashes; an odd
last node moves up a level unhashed; an empty list's root is the zero hash. A path lists, from
the leaf up, each sibling's hash and its side ("Left": it is hashed before the running hash).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from nearrpc.sample import crypto


def _combine(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(left + right).digest()


def merklize(items: Sequence[bytes]) -> tuple[str, list[list[dict[str, Any]]]]:
    """The root (base58) of the items' tree and each item's path (MerklePathItem views)."""
    if not items:
        return crypto.b58(bytes(32)), []
    level = [hashlib.sha256(item).digest() for item in items]
    positions = list(range(len(items)))  # each item's node index on the current level
    paths: list[list[dict[str, Any]]] = [[] for _ in items]
    while len(level) > 1:
        for item, at in enumerate(positions):
            sibling = at ^ 1
            if sibling < len(level):
                side = "Left" if sibling < at else "Right"
                paths[item].append({"hash": crypto.b58(level[sibling]), "direction": side})
        level = [_combine(level[i], level[i + 1]) if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
        positions = [at // 2 for at in positions]
    return crypto.b58(level[0]), paths


def root_from_path(leaf: bytes, path: Sequence[dict[str, Any]]) -> str:
    """The root a leaf's path leads to (nearcore's compute_root_from_path)."""
    node = hashlib.sha256(leaf).digest()
    for step in path:
        sibling = crypto.b58decode(step["hash"])
        node = _combine(sibling, node) if step["direction"] == "Left" else _combine(node, sibling)
    return crypto.b58(node)
