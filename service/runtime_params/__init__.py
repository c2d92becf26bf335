"""Runtime parameter store: the RuntimeConfigView of any protocol version and chain.

    from nearrpc.runtime_params import RuntimeParamStore
    store = RuntimeParamStore.load()
    store.nearcore_view(86, "mainnet")  # == nearcore's snapshot JSON (real vm_kind)
    store.spec_view(86, "mainnet")      # interface 1.2.14's field set

Modules, one job each:

* `values`       - the parameter value model and strict comparison
* `table`        - diff rules, the per-version chain, version lookup
* `layout`       - flat parameter -> nested view mapping (nearcore's field order)
* `spec_1_2_14`  - where interface 1.2.14's extra keys go, and the key it drops
* `known`        - the set of parameter names we accept
* `render`       - table + layout -> view (incl. the vm_kind platform rule)
* `data_files`   - our JSON data files (written by `tools.convert_params`)
* `store`        - `RuntimeParamStore`: loading, caching, copies
"""

from .errors import (
    DataFormatError,
    DiffMismatchError,
    InvalidProtocolVersionError,
    MissingParameterError,
    ParamStoreError,
    UnknownParameterError,
    UnsupportedChainError,
)
from .store import RuntimeParamStore

__all__ = [
    "DataFormatError",
    "DiffMismatchError",
    "InvalidProtocolVersionError",
    "MissingParameterError",
    "ParamStoreError",
    "RuntimeParamStore",
    "UnknownParameterError",
    "UnsupportedChainError",
]
