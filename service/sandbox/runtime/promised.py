"""The receipts a function call created (contracts.promises), as the runtime sends them.

runtime/runtime/src/receipt_manager.rs and ext.rs: each new receipt comes from the called account
(its predecessor), with the signer, signer key and gas price of the receipt that ran the call; a
receipt made by `promise_batch_then` / `promise_then` waits for one data id per receipt it
follows (given during the call: `ext.create_data_id`, the call's action hash and a count of the
data ids it made, utils.rs `create_data_id`), and each receipt it follows sends its result there
(output data receivers, in the order the dependents were made). A yield is a PromiseYield receipt
with its timeout height (function_call.rs `enqueue_promise_yield_timeout`: the block's height
plus `yield_timeout_length_in_blocks`); each resume a PromiseResume data receipt from the account
to itself, after the action receipts (function_call.rs, the receipt manager's data receipts).
"""

from __future__ import annotations

from collections.abc import Sequence

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
from nearrpc.sandbox.runtime.receipts import ActionReceipt, NewData, NewReceipt


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
    parent: ActionReceipt, created: Sequence[PromiseReceipt], resumes: Sequence[tuple[str, bytes]], expires_at: int
) -> list[NewReceipt | NewData]:
    """The call's receipts in the order made, then its resumes (`expires_at`: a yield's timeout)."""
    account_id = parent.receiver_id
    made: list[NewReceipt | NewData] = [
        NewReceipt(
            predecessor_id=account_id,
            receiver_id=receipt.receiver_id,
            signer_id=parent.signer_id,
            signer_public_key=parent.signer_public_key,
            gas_price=parent.gas_price,
            actions=tuple(_action(action) for action in receipt.actions),
            input_data_ids=tuple(receipt.input_data_ids),
            output_data_receivers=tuple(receipt.output_data_receivers),
            is_promise_yield=receipt.is_yield,
            expires_at=expires_at if receipt.is_yield else None,
        )
        for receipt in created
    ]
    made += [NewData(account_id, account_id, data_id, payload, is_promise_resume=True) for data_id, payload in resumes]
    return made
