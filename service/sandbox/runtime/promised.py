"""The receipts a function call created (contracts.promises), as the runtime sends them.

runtime/runtime/src/receipt_manager.rs and ext.rs: each new receipt comes from the called account
(its predecessor), with the signer, signer key and gas price of the receipt that ran the call; a
receipt made by `promise_batch_then` / `promise_then` waits for one data id per receipt it
follows (`create_receipt`: `ext.create_data_id`, the call's action hash and a count of the data ids
it made, utils.rs `create_data_id`), and each receipt it follows sends its result there (output
data receivers, in the order the dependents were made).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nearrpc.contracts.promises import (
    NewAction,
    NewAddKey,
    NewCreateAccount,
    NewDeleteAccount,
    NewDeleteKey,
    NewDeployContract,
    NewFunctionCall,
    NewStake,
    NewTransfer,
    PromiseReceipt,
)
from nearrpc.sandbox.runtime.model import (
    AccessKey,
    Action,
    AddKey,
    CreateAccount,
    DeleteAccount,
    DeleteKey,
    DeployContract,
    FunctionCall,
    FunctionCallPermission,
    Stake,
    Transfer,
)
from nearrpc.sandbox.runtime.receipts import ActionReceipt, NewReceipt


def _action(action: NewAction) -> Action:
    if isinstance(action, NewCreateAccount):
        return CreateAccount()
    if isinstance(action, NewDeployContract):
        return DeployContract(action.code)
    if isinstance(action, NewFunctionCall):
        return FunctionCall(action.method_name, action.args, action.gas, action.deposit)
    if isinstance(action, NewTransfer):
        return Transfer(action.deposit)
    if isinstance(action, NewStake):
        return Stake(action.stake, action.public_key)
    if isinstance(action, NewAddKey):
        permission = None
        if action.permission is not None:
            allowance, receiver_id, method_names = action.permission
            permission = FunctionCallPermission(allowance, receiver_id, method_names)
        return AddKey(action.public_key, AccessKey(action.nonce, permission))
    if isinstance(action, NewDeleteKey):
        return DeleteKey(action.public_key)
    assert isinstance(action, NewDeleteAccount)
    return DeleteAccount(action.beneficiary_id)


def new_receipts(
    parent: ActionReceipt, created: Sequence[PromiseReceipt], data_id: Callable[[int], str]
) -> list[NewReceipt]:
    """The call's receipts in the order made, with their data dependencies (`data_id(n)`: the
    call's n-th data id)."""
    inputs: list[list[str]] = [[] for _ in created]
    outputs: list[list[tuple[str, str]]] = [[] for _ in created]
    count = 0
    for index, receipt in enumerate(created):
        for awaited in receipt.depends_on:
            made = data_id(count)
            count += 1
            inputs[index].append(made)
            outputs[awaited].append((made, receipt.receiver_id))
    return [
        NewReceipt(
            predecessor_id=parent.receiver_id,
            receiver_id=receipt.receiver_id,
            signer_id=parent.signer_id,
            signer_public_key=parent.signer_public_key,
            gas_price=parent.gas_price,
            actions=tuple(_action(action) for action in receipt.actions),
            input_data_ids=tuple(inputs[index]),
            output_data_receivers=tuple(outputs[index]),
        )
        for index, receipt in enumerate(created)
    ]
