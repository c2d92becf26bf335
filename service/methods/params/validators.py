"""The params of the validators methods (nearcore's chain/jsonrpc/src/api/validator.rs).

- `validators` (`RpcValidatorRequest::parse`): a one-element array is its element read as a
  `MaybeBlockId` (null: the latest epoch; a bad element is refused with its own error, nothing
  else is tried). Anything else is serde_json's `Value` read as the enum `EpochReference`
  itself (core/primitives/src/types.rs, externally tagged, snake_case), not as the struct that
  flattens it: a string names a unit variant (`"latest"`), an object of exactly one member names
  a variant and holds its value (`{"epoch_id": hash}`, `{"block_id": id}`, `{"latest": null}`);
  every other value is refused with serde's words (serde_json's `deserialize_enum`).
- `EXPERIMENTAL_validators_ordered` (`Params::parse` into the struct RpcValidatorsOrderedRequest):
  `{block_id?}` (other members ignored), or the struct as an array: its one element, a longer
  array refused once that element is read.
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
from nearrpc.nearcore.echo import shown

# EpochReference's variants, in their declared order (serde's "expected one of" lists them so)
EPOCH_REFERENCE_VARIANTS: Final = ("epoch_id", "block_id", "latest")
_ONE_OF_VARIANTS: Final = ", ".join(f"`{v}`" for v in EPOCH_REFERENCE_VARIANTS)
_NO_VALUE: Final = object()  # a variant named by a bare string: serde_json gives it no value


def validators_params(method: MethodSpec, params: object) -> object:
    if isinstance(params, list) and len(params) == 1:  # Params::try_singleton
        return (maybe_block_id(params[0]),)
    return epoch_reference(params)


def epoch_reference(params: object) -> object:
    """`params` read as serde_json reads a Value into the enum EpochReference: the form the
    generated model takes ("latest", {"latest": None}, {"epoch_id": ...}, {"block_id": ...})."""
    value: object
    if isinstance(params, str):
        variant, value = params, _NO_VALUE
    elif isinstance(params, dict):
        if len(params) != 1:  # {} too
            raise failed("invalid value: map, expected map with a single key")
        ((variant, value),) = params.items()
    else:
        raise failed(f"invalid type: {json_kind(params)}, expected string or map")
    if variant not in EPOCH_REFERENCE_VARIANTS:
        raise failed(f"unknown variant `{shown(variant)}`, expected one of {_ONE_OF_VARIANTS}")
    if variant == "latest":  # a unit variant: no value, or a value that reads as unit (null)
        if value is _NO_VALUE:
            return "latest"
        if value is not None:
            raise failed(f"invalid type: {json_kind(value)}, expected unit")
        return {"latest": None}
    if value is _NO_VALUE:  # a newtype variant named without its value
        raise failed("invalid type: unit variant, expected newtype variant")
    if variant == "epoch_id":
        return {"epoch_id": checked_hash(value)}
    return {"block_id": checked_block_id(value)}


def validators_ordered_params(method: MethodSpec, params: object) -> object:
    if isinstance(params, list):  # the struct as a sequence of its one field
        if not params:
            raise failed(f"invalid length 0, expected struct {method.params_schema} with 1 element")
        block_id = maybe_block_id(params[0])
        if len(params) > 1:  # serde_json: the whole array read, elements left over
            raise failed(f"invalid length {len(params)}, expected fewer elements in array")
        return (block_id,)
    fields = expect_object(params, method.params_schema)
    return {"block_id": maybe_block_id(fields.get("block_id"))}


READERS: Final[dict[str, Reader]] = {
    "validators": validators_params,
    "EXPERIMENTAL_validators_ordered": validators_ordered_params,
}
