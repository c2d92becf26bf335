"""Validators: `validators` of an epoch, EXPERIMENTAL_validators_ordered at a block."""

from __future__ import annotations

from nearrpc.generated import models
from nearrpc.methods.handlers.resolution import Resolution, store_failures_are_internal
from nearrpc.methods.validators import epoch_reference, ordered_block_id, validators_answer, validators_ordered_answer


class ValidatorMethods(Resolution):
    @store_failures_are_internal
    async def validators(self, params: models.RpcValidatorRequest) -> bytes:
        return await validators_answer(self._reader, epoch_reference(params))

    @store_failures_are_internal
    async def EXPERIMENTAL_validators_ordered(self, params: models.RpcValidatorsOrderedRequest) -> bytes:
        return await validators_ordered_answer(self._reader, ordered_block_id(params))
