"""`RuntimeParamStore`: the runtime config of any protocol version, as nearcore renders it.

How a config is found (nearcore's RuntimeConfigStore semantics):

1. The base table is stored as version 0. The diffs are applied cumulatively in ascending
   version and each result is stored under its diff's version.
2. A request for protocol version P uses the stored version max{V <= P}.
3. For chain id "testnet" the version-0 entry is the testnet base table instead. The diffs are
   still applied on top of the mainnet base table, so every later version is shared.

Views are rendered for every stored version when the store is built (so broken data fails at
load time, not on a request) and kept as the cache. Callers get a fresh deep copy on every
call: mutating a returned view never affects the store or other callers.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Final

from .data_files import ParamData, SpecAdditions, load_param_data, load_spec_additions
from .errors import UnsupportedChainError
from .layout import NEARCORE_LAYOUT, Obj
from .render import render
from .spec_1_2_14 import SPEC_LAYOUT
from .table import build_chain, resolve_version
from .values import JsonValue, ParamValue, Table

TESTNET: Final = "testnet"
# Chains for which nearcore builds special configs that this store does not reproduce.
UNSUPPORTED_CHAINS: Final = frozenset({"benchmarknet", "congestion_control_test"})


class ViewKind(enum.Enum):
    NEARCORE = "nearcore"  # nearcore's field set (interface 1.2.11), as in the snapshots
    SPEC_1_2_14 = "spec_1_2_14"  # our interface's field set


_LAYOUTS: Final[Mapping[ViewKind, Obj]] = {
    ViewKind.NEARCORE: NEARCORE_LAYOUT,
    ViewKind.SPEC_1_2_14: SPEC_LAYOUT,
}

_CacheKey = tuple[ViewKind, bool, int]  # (view kind, testnet version-0 entry?, stored version)


def _copy(value: JsonValue) -> object:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


def _check_chain_id(chain_id: object) -> str:
    if not isinstance(chain_id, str) or not chain_id:
        raise UnsupportedChainError(f"chain id must be a non-empty string, got {chain_id!r}")
    if chain_id in UNSUPPORTED_CHAINS:
        raise UnsupportedChainError(
            f"chain id {chain_id!r} uses a special nearcore runtime config that this store does not reproduce"
        )
    return chain_id


class RuntimeParamStore:
    """Immutable, thread-safe after construction (all state is built in `__init__`)."""

    def __init__(self, data: ParamData, additions: SpecAdditions | None = None) -> None:
        extra: Table = dict(additions.base_parameters) if additions is not None else {}
        # Upstream data wins over an addition once nearcore's own files carry the parameter.
        spec_base: Table = {**extra, **data.base}
        spec_testnet_base: Table = {**extra, **data.testnet_base}

        chains: dict[tuple[ViewKind, bool], Mapping[int, Mapping[str, ParamValue]]] = {
            (ViewKind.NEARCORE, False): build_chain(data.base, data.diffs),
            (ViewKind.NEARCORE, True): {0: data.testnet_base},
            (ViewKind.SPEC_1_2_14, False): build_chain(spec_base, data.diffs),
            (ViewKind.SPEC_1_2_14, True): {0: spec_testnet_base},
        }
        self._versions: tuple[int, ...] = tuple(sorted(chains[(ViewKind.NEARCORE, False)]))
        self._views: dict[_CacheKey, dict[str, JsonValue]] = {}
        for (kind, testnet_v0), chain in chains.items():
            chain_name = "testnet" if testnet_v0 else "mainnet"
            for version, table in chain.items():
                context = f"{kind.value} view, {chain_name} protocol version {version}"
                self._views[(kind, testnet_v0, version)] = render(_LAYOUTS[kind], table, context)

    @classmethod
    def load(cls, data_dir: Path | None = None) -> RuntimeParamStore:
        """The store built from the packaged data files (or from `data_dir`).

        Without `data_dir` the same instance is returned on every call.
        """
        if data_dir is None:
            return _packaged_store()
        return cls(load_param_data(data_dir), load_spec_additions(data_dir))

    @property
    def stored_versions(self) -> tuple[int, ...]:
        return self._versions

    def _view(self, kind: ViewKind, protocol_version: int, chain_id: str) -> dict[str, object]:
        testnet = _check_chain_id(chain_id) == TESTNET
        version = resolve_version(self._versions, protocol_version)
        view = self._views[(kind, testnet and version == 0, version)]
        return {key: _copy(value) for key, value in view.items()}

    def nearcore_view(self, protocol_version: int, chain_id: str) -> dict[str, object]:
        """RuntimeConfigView exactly as nearcore renders it (its snapshot JSON, with the real
        `vm_kind`). A new copy per call."""
        return self._view(ViewKind.NEARCORE, protocol_version, chain_id)

    def spec_view(self, protocol_version: int, chain_id: str) -> dict[str, object]:
        """RuntimeConfigView with interface 1.2.14's field set. A new copy per call."""
        return self._view(ViewKind.SPEC_1_2_14, protocol_version, chain_id)


@cache
def _packaged_store() -> RuntimeParamStore:
    return RuntimeParamStore(load_param_data(), load_spec_additions())
