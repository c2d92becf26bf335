"""The params of the validators methods (nearcore's chain/jsonrpc/src/api/validator.rs).

- `validators`: `[block_id or null]` (null: the latest epoch), else the first member naming an
  EpochReference variant: `epoch_id`, `block_id` or `latest` (null).
- `EXPERIMENTAL_validators_ordered`: a plain struct, so `{block_id?}` or the one-element array.
"""

from __future__ import annotations

from typing import Final

from nearrpc.generated.methods import MethodSpec
from nearrpc.methods.params.readers import (
    Reader,
    checked_block_id,
    checked_hash,
    expect_object,
    failed,
    json_kind,
    maybe_block_id,
)


def validators_params(method: MethodSpec, params: object) -> object:
    if isinstance(params, list) and len(params) == 1:
        return (maybe_block_id(params[0]),)
    fields = expect_object(params, method.params_schema)
    for key, value in fields.items():  # the first member that names a variant
        if key == "epoch_id":
            return {"epoch_id": checked_hash(value)}
        if key == "block_id":
            return {"block_id": checked_block_id(value)}
        if key == "latest":
            if value is not None:
                raise failed(f"invalid type: {json_kind(value)}, expected unit")
            return {"latest": None}
    raise failed("no variant of enum EpochReference found in flattened data")


def validators_ordered_params(method: MethodSpec, params: object) -> object:
    if isinstance(params, list):
        if len(params) != 1:
            raise failed(f"invalid length {len(params)}, expected struct RpcValidatorsOrderedRequest with 1 element")
        return (maybe_block_id(params[0]),)
    fields = expect_object(params, method.params_schema)
    return {"block_id": maybe_block_id(fields.get("block_id"))}


READERS: Final[dict[str, Reader]] = {
    "validators": validators_params,
    "EXPERIMENTAL_validators_ordered": validators_ordered_params,
}
