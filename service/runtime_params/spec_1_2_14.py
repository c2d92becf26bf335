"""Interface 1.2.14's RuntimeConfigView field set, derived from nearcore's (1.2.11) layout.

The reference snapshots carry the 1.2.11 field set. Interface 1.2.14 (see
SPEC_1_2_14_DELTA in the shared reference notes) adds nine fields and drops one. The placement
table below says where each new key goes in the key order; the positions are the ones newer
nearcore uses (its RuntimeConfigView snapshots for protocol versions 157/158).

The values of the new parameters are data, not code: `data/spec_1_2_14_additions.json`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .layout import NEARCORE_LAYOUT, Field, Kind, Node, Obj, ext_cost, layout_parameters


@dataclass(frozen=True)
class Insertion:
    path: tuple[str, ...]  # object that receives the key, from the view root
    key: str
    after: str  # existing key (or a key inserted by an earlier row) it follows
    node: Node


_EXT = ("wasm_config", "ext_costs")
_VM = ("wasm_config",)
_LIMITS = ("wasm_config", "limit_config")

# Where the 1.2.14 keys go, applied top to bottom: (object, new key, goes right after, kind).
# Ext cost `x` reads parameter `wasm_x`; the others read the parameter of the same name.
# max_globals_per_contract is an `Option` limit like its neighbours: shown only when set.
PLACEMENT_TABLE: tuple[tuple[tuple[str, ...], str, str, Kind], ...] = (
    (_EXT, "sha3_256_base", "keccak512_byte", Kind.COST),
    (_EXT, "sha3_256_byte", "sha3_256_base", Kind.COST),
    (_EXT, "sha3_384_base", "sha3_256_byte", Kind.COST),
    (_EXT, "sha3_384_byte", "sha3_384_base", Kind.COST),
    (_EXT, "sha3_512_base", "sha3_384_byte", Kind.COST),
    (_EXT, "sha3_512_byte", "sha3_512_base", Kind.COST),
    (_EXT, "ml_dsa_verify_base", "p256_verify_byte", Kind.COST),
    (_EXT, "ml_dsa_verify_byte", "ml_dsa_verify_base", Kind.COST),
    (_VM, "ml_dsa_verify_host_fn", "p256_verify_host_fn", Kind.BOOL),
    (_VM, "sha3_host_fns", "ml_dsa_verify_host_fn", Kind.BOOL),
    (_LIMITS, "max_globals_per_contract", "max_types_per_contract", Kind.UINT),
)

_OPTIONAL = frozenset({"max_globals_per_contract"})


def _insertion(path: tuple[str, ...], key: str, after: str, kind: Kind) -> Insertion:
    if path == _EXT:
        return Insertion(path, key, after, ext_cost(key))
    return Insertion(path, key, after, Field(key, kind, optional=key in _OPTIONAL))


PLACEMENT: tuple[Insertion, ...] = tuple(_insertion(*row) for row in PLACEMENT_TABLE)

# Keys 1.2.14 no longer has.
REMOVED: tuple[tuple[tuple[str, ...], str], ...] = ((("wasm_config",), "storage_get_mode"),)


def _edit(obj: Obj, path: tuple[str, ...], edit: Insertion | str) -> Obj:
    """Return `obj` with one insertion (or the removal of key `edit`) at `path`."""
    if path:
        head, rest = path[0], path[1:]
        if head not in obj.keys():
            raise KeyError(f"layout has no object {head!r}")
        fields = []
        for key, node in obj.fields:
            if key == head:
                if not isinstance(node, Obj):
                    raise KeyError(f"layout key {head!r} is not an object")
                node = _edit(node, rest, edit)
            fields.append((key, node))
        return Obj(tuple(fields))
    if isinstance(edit, str):
        if edit not in obj.keys():
            raise KeyError(f"cannot remove {edit!r}: not in the layout")
        return Obj(tuple((key, node) for key, node in obj.fields if key != edit))
    if edit.key in obj.keys():
        raise KeyError(f"cannot insert {edit.key!r}: already in the layout")
    if edit.after not in obj.keys():
        raise KeyError(f"cannot insert {edit.key!r} after {edit.after!r}: no such key")
    fields = []
    for key, node in obj.fields:
        fields.append((key, node))
        if key == edit.after:
            fields.append((edit.key, edit.node))
    return Obj(tuple(fields))


def derive_layout(base: Obj) -> Obj:
    layout = base
    for insertion in PLACEMENT:
        layout = _edit(layout, insertion.path, insertion)
    for path, key in REMOVED:
        layout = _edit(layout, path, key)
    return layout


SPEC_LAYOUT: Obj = derive_layout(NEARCORE_LAYOUT)

# Parameters that only the 1.2.14 layout reads (their values come from the additions file
# until nearcore's own data carries them).
SPEC_ONLY_PARAMETERS: frozenset[str] = layout_parameters(SPEC_LAYOUT) - layout_parameters(NEARCORE_LAYOUT)
