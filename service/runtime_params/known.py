"""The set of parameter names the store understands, and the check that enforces it."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import UnknownParameterError
from .layout import NEARCORE_LAYOUT, NOT_IN_VIEW, layout_parameters
from .spec_1_2_14 import SPEC_LAYOUT

KNOWN_PARAMETERS: frozenset[str] = layout_parameters(NEARCORE_LAYOUT) | layout_parameters(SPEC_LAYOUT) | NOT_IN_VIEW


def check_known(names: Iterable[str], where: str) -> None:
    unknown = sorted(set(names) - KNOWN_PARAMETERS)
    if unknown:
        raise UnknownParameterError(
            f"{where}: unknown parameter(s) {', '.join(unknown)}. Map each one in "
            "service/runtime_params/layout.py (a view field, or NOT_IN_VIEW if the view does "
            "not show it) before converting."
        )
