"""Params into the generated, typed params model: the entry of the params room.

Each family module says every form its methods' params may take and every refusal's words
(nearcore's `RpcRequest::parse` per request type, chain/jsonrpc/src/api/), in a table of
READERS by method name; a method with no reader ignores its params (None). The reader's value
is validated strictly into the generated model (no coercion), against the one branch of its
union the request names where it names one (`branches`), so handlers get typed input.
"""

from __future__ import annotations

from typing import Any, Final

import pydantic

from nearrpc.generated import models
from nearrpc.generated.methods import MethodSpec
from nearrpc.methods.params import blocks, changes, chunks, query, sending, transactions, validators
from nearrpc.methods.params.branches import branch_of, refusal
from nearrpc.methods.params.readers import Reader, failed

_set: Final = object.__setattr__  # past pydantic's own __setattr__, as its model_construct sets them

# every method that reads its params, by name: its family's reader
READERS: Final[dict[str, Reader]] = {
    **blocks.READERS,
    **query.READERS,
    **changes.READERS,
    **transactions.READERS,
    **chunks.READERS,
    **validators.READERS,
    **sending.READERS,
}


def normalise(method: MethodSpec, params: object) -> object:
    """The params as the typed model expects them, or None for methods that ignore params."""
    reader = READERS.get(method.name)
    return None if reader is None else reader(method, params)


def _wrapped(model: type[pydantic.RootModel[Any]], branch: pydantic.BaseModel) -> Any:
    """The union model's instance around an instance of one of its branches, as the union's own
    validator makes it (it keeps a branch's instance as it is, with `root` alone set): built
    directly, where that validator first tries the union's branches in turn (about 2.5 us for
    `query`'s 27) and model_construct runs its Python loop over the fields (about 1 us)."""
    instance = model.__new__(model)
    _set(instance, "__dict__", {"root": branch})
    _set(instance, "__pydantic_fields_set__", {"root"})
    return instance


def typed_params(method: MethodSpec, params: object) -> Any:
    """Validate `params` into the generated model of `method` (strictly: no coercion)."""
    model = getattr(models, method.params_schema)
    reader = READERS.get(method.name)  # normalise(), written out: every request runs this
    normalised = None if reader is None else reader(method, params)
    branch = branch_of(model, normalised)
    if branch is not None:  # the one branch the request can fit (branches): validated alone
        try:
            fitted = branch.__pydantic_validator__.validate_python(normalised, strict=True)
        except pydantic.ValidationError:
            pass  # refused: worded from the whole union's errors, as before
        else:
            return _wrapped(model, fitted)
    try:
        return model.model_validate(normalised, strict=True)
    except pydantic.ValidationError as exc:
        raise failed(refusal(exc.errors())) from None
