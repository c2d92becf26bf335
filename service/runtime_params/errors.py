"""Errors raised by the runtime parameter store.

All of them derive from `ParamStoreError` (a `ValueError`), so a caller can catch the family
with one clause. Messages are complete sentences meant for a developer reading a log.
"""

from __future__ import annotations


class ParamStoreError(ValueError):
    """Base class of every error raised by `nearrpc.runtime_params`."""


class DataFormatError(ParamStoreError):
    """A data file (or a value inside it) does not have the shape the store expects."""


class UnknownParameterError(ParamStoreError):
    """A parameter name is not in the layout tables (see `layout.KNOWN_PARAMETERS`)."""


class DiffMismatchError(ParamStoreError):
    """A per-version diff does not apply to the table it is applied to.

    Raised when a change's `old` value differs from the current value, when `old` names a
    parameter that is absent, or when an addition (no `old`) targets a parameter that exists.
    """

    def __init__(self, parameter: str, version: int, expected: str, actual: str) -> None:
        self.parameter = parameter
        self.version = version
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"runtime parameter diff for protocol version {version} does not apply: "
            f"parameter {parameter!r} was expected to be {expected} "
            f"but the table built from the earlier versions has {actual}"
        )


class MissingParameterError(ParamStoreError):
    """A view field needs a parameter that is absent and has no code default."""


class InvalidProtocolVersionError(ParamStoreError):
    """The requested protocol version is not a non-negative integer."""


class UnsupportedChainError(ParamStoreError):
    """The chain id is not a string, or names a chain whose configs we do not reproduce."""
