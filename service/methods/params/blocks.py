"""The params of blocks and configs (nearcore's chain/jsonrpc/src/api/ blocks.rs, config.rs,
gas_price.rs).

- `block`: an object holding one block reference, or the positional `[block_id]`.
- `EXPERIMENTAL_protocol_config`: the object alone.
- `gas_price`: `[block_id or null]` (null: the head), as nearcore's `(MaybeBlockId,)` tuple
  takes it; also `{"block_id": ...}`, the object form the spec describes (spec/DEVIATIONS.md).
"""

from __future__ import annotations

from typing import Final

from nearrpc.generated.methods import MethodSpec
from nearrpc.methods.params.readers import (
    Reader,
    block_reference,
    checked_block_id,
    expect_object,
    failed,
    json_kind,
    maybe_block_id,
    reference_alone,
)


def block_params(method: MethodSpec, params: object) -> object:
    if isinstance(params, list):
        if len(params) != 1:
            raise failed(f"invalid length {len(params)}, expected a tuple of size 1")
        return (checked_block_id(params[0]),)
    return block_reference(expect_object(params, method.params_schema))


def gas_price_params(method: MethodSpec, params: object) -> object:
    if isinstance(params, dict):
        return (maybe_block_id(params.get("block_id")),)
    if not isinstance(params, list):
        raise failed(f"invalid type: {json_kind(params)}, expected a tuple of size 1")
    if len(params) != 1:
        raise failed(f"invalid length {len(params)}, expected a tuple of size 1")
    return (maybe_block_id(params[0]),)


READERS: Final[dict[str, Reader]] = {
    "block": block_params,
    "EXPERIMENTAL_protocol_config": reference_alone,
    "gas_price": gas_price_params,
}
