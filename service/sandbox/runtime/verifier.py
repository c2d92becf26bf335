"""nearcore's checks of a transaction before it is included (runtime/runtime/src/verifier.rs,
action_validation.rs; core/primitives/src/transaction.rs `ValidatedTransaction`), in nearcore's
order. Every refusal raises `model.TransactionRefused` with the InvalidTxError JSON nearcore
answers (u128 amounts as strings, gas and nonces as numbers, unit variants as their name).

What the chain writer calls, for a transaction arriving (nearcore's client `process_tx`) and again
when a block includes it (`Runtime::apply`):
1. `check_validity_period(base_height, head_height, validity_period)`: the height of the block
   the transaction names (None when the chain has no such block) against the head; chain/chain's
   `check_transaction_validity_period` answers "Expired" for both an unknown and a too old block
   (and "InvalidChain" for one that is not the head's ancestor).
2. `validate_transaction(config, signed, protocol_version)`: stateless, verifier.rs
   `validate_transaction`: the actions' limits, then (`ValidatedTransaction::new`) the size, then
   the signature.
3. `verify_and_charge_transaction(state, config, signed, gas_price=, block_height=)`: the cost
   (`config::tx_cost`), the signer and its key (`get_signer_and_access_key`), then
   `verify_and_charge_tx_ephemeral`: the nonce, the balance, the allowance, the storage stake left
   after the charge, a function-call key's permission. Returns the charged signer and key and the
   cost numbers; it writes nothing (the caller writes them).
`check_transaction` runs 2 and 3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from nearrpc.nearcore.account_id import account_id_problem
from nearrpc.sandbox.runtime import fees, model, signature
from nearrpc.sandbox.runtime.staking_key import is_valid_staking_key

# core/primitives account.rs: a nonce must stay below the block height times this
ACCESS_KEY_NONCE_RANGE_MULTIPLIER: Final = 1_000_000
# verifier.rs: an account using no more storage than this needs no balance for it (NEP-448)
ZERO_BALANCE_ACCOUNT_STORAGE_LIMIT: Final = 770
# ProtocolFeature::PostQuantumSignatures: from here the size limit counts the signature too
_WIRE_SIZE_VERSION: Final = 85
_SIGNATURE_BORSH_LENGTHS: Final = {"ed25519": 65, "secp256k1": 66}
# ProtocolFeature::RejectEmptyMethodName: a function call must name a method
_REJECT_EMPTY_METHOD_NAME_VERSION: Final = 87


def _refuse(error: Mapping[str, Any] | str) -> model.TransactionRefused:
    return model.TransactionRefused(error)


def _actions_refused(error: Mapping[str, Any] | str) -> model.TransactionRefused:
    return _refuse({"ActionsValidation": error})


def _key_refused(error: Mapping[str, Any] | str) -> model.TransactionRefused:
    return _refuse({"InvalidAccessKeyError": error})


# action_validation.rs


def validate_actions(limits: Mapping[str, Any], actions: Sequence[model.Action], protocol_version: int) -> None:
    """action_validation.rs `validate_actions` (NewReceipt mode); raises TransactionRefused with
    {"ActionsValidation": ...}. (nearcore also passes the receiver, which only its deterministic
    state-init actions read: the model has none.)"""
    limit = int(limits["max_actions_per_receipt"])
    if len(actions) > limit:
        raise _actions_refused(
            {"TotalNumberOfActionsExceeded": {"total_number_of_actions": len(actions), "limit": limit}}
        )
    deploys = sum(isinstance(action, model.DeployContract) for action in actions)
    deploy_limit = limits.get("max_deploy_actions_per_receipt")
    if deploy_limit is not None and deploys > int(deploy_limit):
        raise _actions_refused(
            {"TotalNumberOfDeployActionsExceeded": {"number_of_deploy_actions": deploys, "limit": int(deploy_limit)}}
        )
    found_delegate = False
    for index, action in enumerate(actions):
        if isinstance(action, model.DeleteAccount) and index + 1 < len(actions):
            raise _actions_refused("DeleteActionMustBeFinal")
        if isinstance(action, model.Delegate):
            if found_delegate:
                raise _actions_refused("DelegateActionMustBeOnlyOne")
            found_delegate = True
        _validate_action(limits, action, protocol_version)
    try:
        prepaid = fees.total_prepaid_gas(actions)
    except fees.CostOverflow:
        raise _actions_refused("IntegerOverflow") from None
    gas_limit = int(limits["max_total_prepaid_gas"])
    if prepaid > gas_limit:
        raise _actions_refused({"TotalPrepaidGasExceeded": {"total_prepaid_gas": prepaid, "limit": gas_limit}})


def _validate_action(limits: Mapping[str, Any], action: model.Action, protocol_version: int) -> None:
    """action_validation.rs `validate_action_with_mode`, one action."""
    match action:
        case model.DeployContract(code=code):
            limit = int(limits["max_contract_size"])
            if len(code) > limit:
                raise _actions_refused({"ContractSizeExceeded": {"size": len(code), "limit": limit}})
        case model.FunctionCall():
            _validate_function_call(limits, action, protocol_version)
        case model.Stake(public_key=public_key):
            if not is_valid_staking_key(public_key):
                raise _actions_refused({"UnsuitableStakingKey": {"public_key": public_key}})
        case model.AddKey(access_key=access_key):
            if access_key.permission is not None:
                _validate_permission(limits, access_key.permission)
        case model.Delegate(delegate_action=inner):
            # the inner actions as a receipt of their own
            validate_actions(limits, inner.actions, protocol_version)
        # CreateAccount, Transfer, DeleteKey: nothing to check; DeleteAccount's beneficiary is an
        # AccountId the decoder has validated already


def _validate_function_call(limits: Mapping[str, Any], call: model.FunctionCall, protocol_version: int) -> None:
    if call.gas == 0:
        raise _actions_refused("FunctionCallZeroAttachedGas")
    if protocol_version >= _REJECT_EMPTY_METHOD_NAME_VERSION and not call.method_name:
        raise _actions_refused("FunctionCallEmptyMethodName")
    name_length = len(call.method_name.encode())
    name_limit = int(limits["max_length_method_name"])
    if name_length > name_limit:
        raise _actions_refused({"FunctionCallMethodNameLengthExceeded": {"length": name_length, "limit": name_limit}})
    args_limit = int(limits["max_arguments_length"])
    if len(call.args) > args_limit:
        raise _actions_refused({"FunctionCallArgumentsLengthExceeded": {"length": len(call.args), "limit": args_limit}})


def _validate_permission(limits: Mapping[str, Any], permission: model.FunctionCallPermission) -> None:
    """action_validation.rs `validate_access_key_permission`."""
    if int(limits.get("account_id_validity_rules_version", 0)) >= 1 and account_id_problem(permission.receiver_id):
        # nearcore shows at most 128 bytes of it, cut at a character boundary (`truncate_string`)
        shown = permission.receiver_id.encode()[:128].decode("utf-8", "ignore")
        raise _actions_refused({"InvalidAccountId": {"account_id": shown}})
    name_limit = int(limits["max_length_method_name"])
    total = 0
    for name in permission.method_names:
        length = len(name.encode())
        if length > name_limit:
            raise _actions_refused({"AddKeyMethodNameLengthExceeded": {"length": length, "limit": name_limit}})
        total += length + 1  # and its terminating character
    bytes_limit = int(limits["max_number_bytes_method_names"])
    if total > bytes_limit:
        raise _actions_refused(
            {"AddKeyMethodNamesNumberOfBytesExceeded": {"total_number_of_bytes": total, "limit": bytes_limit}}
        )


# verifier.rs `validate_transaction` and transaction.rs `ValidatedTransaction::new`


def size_for_limits(signed: model.SignedTransaction, protocol_version: int) -> int:
    """transaction.rs `size_for_limits`: the signed bytes from protocol 85, the transaction's before."""
    if protocol_version >= _WIRE_SIZE_VERSION:
        return signed.size
    return signed.size - _SIGNATURE_BORSH_LENGTHS[signed.signature.partition(":")[0]]


def validate_transaction(config: fees.FeeConfig, signed: model.SignedTransaction, protocol_version: int) -> None:
    """verifier.rs `validate_transaction`: what can be checked without the state."""
    tx = signed.transaction
    validate_actions(config.limits, tx.actions, protocol_version)
    size = size_for_limits(signed, protocol_version)
    limit = int(config.limits["max_transaction_size"])
    if size > limit:
        raise _refuse({"TransactionSizeExceeded": {"size": size, "limit": limit}})
    if not signature.verify_transaction(signed):
        raise _refuse("InvalidSignature")


# verifier.rs `get_signer_and_access_key`, `verify_and_charge_tx_ephemeral`


@dataclass(frozen=True, slots=True)
class Charged:
    """A transaction verified and charged: what the signer and its key become, and the cost
    (gas burnt at conversion, gas and price of the receipt, tokens burnt)."""

    signer: model.Account
    access_key: model.AccessKey
    cost: fees.TransactionCost


def lacking_for_storage(account: model.Account, balance: int, config: fees.FeeConfig) -> int:
    """verifier.rs `check_storage_stake`: how much `balance` (the account's amount to be) lacks for
    its storage, 0 when enough or when it is a zero-balance account (NEP-448). The action executor
    answers LackBalanceForState with the same rule."""
    required = account.storage_usage * config.storage_amount_per_byte
    available = balance + account.locked
    if available >= required or account.storage_usage <= ZERO_BALANCE_ACCOUNT_STORAGE_LIMIT:
        return 0
    return required - available


def _check_nonce(tx_nonce: int, key_nonce: int, block_height: int | None) -> None:
    """verifier.rs `verify_nonce` (the monotonic mode of V0 transactions)."""
    if tx_nonce <= key_nonce:
        raise _refuse({"InvalidNonce": {"tx_nonce": tx_nonce, "ak_nonce": key_nonce}})
    if block_height is not None:
        upper_bound = min(block_height * ACCESS_KEY_NONCE_RANGE_MULTIPLIER, 2**64 - 1)  # saturating
        if tx_nonce >= upper_bound:
            raise _refuse({"NonceTooLarge": {"tx_nonce": tx_nonce, "upper_bound": upper_bound}})


def _check_function_call_permission(permission: model.FunctionCallPermission, tx: model.Transaction) -> None:
    """verifier.rs `verify_function_call_permission`."""
    if len(tx.actions) != 1 or not isinstance(tx.actions[0], model.FunctionCall):
        raise _key_refused("RequiresFullAccess")
    call = tx.actions[0]
    if call.deposit > 0:
        raise _key_refused("DepositWithFunctionCall")
    if tx.receiver_id != permission.receiver_id:
        raise _key_refused({"ReceiverMismatch": {"tx_receiver": tx.receiver_id, "ak_receiver": permission.receiver_id}})
    if permission.method_names and call.method_name not in permission.method_names:
        raise _key_refused({"MethodNameMismatch": {"method_name": call.method_name}})


def verify_and_charge_transaction(
    state: model.StateView,
    config: fees.FeeConfig,
    signed: model.SignedTransaction,
    *,
    gas_price: int,
    block_height: int | None,
) -> Charged:
    """The state's checks of a validated transaction and what it charges. `block_height` is the
    height of the block applying it (the nonce's upper bound); nearcore's RPC admission passes
    None and skips that bound."""
    tx = signed.transaction
    try:
        cost = fees.tx_cost(config, tx, gas_price)
    except fees.CostOverflow:
        raise _refuse("CostOverflow") from None
    signer = state.account(tx.signer_id)
    if signer is None:
        raise _refuse({"SignerDoesNotExist": {"signer_id": tx.signer_id}})
    access_key = state.access_key(tx.signer_id, tx.public_key)
    if access_key is None:
        raise _key_refused({"AccessKeyNotFound": {"account_id": tx.signer_id, "public_key": tx.public_key}})
    _check_nonce(tx.nonce, access_key.nonce, block_height)
    if signer.amount < cost.total_cost:
        raise _refuse(
            {
                "NotEnoughBalance": {
                    "signer_id": tx.signer_id,
                    "balance": str(signer.amount),
                    "cost": str(cost.total_cost),
                }
            }
        )
    new_amount = signer.amount - cost.total_cost
    permission = access_key.permission
    if permission is not None and permission.allowance is not None:
        if permission.allowance < cost.total_cost:
            raise _key_refused(
                {
                    "NotEnoughAllowance": {
                        "account_id": tx.signer_id,
                        "public_key": tx.public_key,
                        "allowance": str(permission.allowance),
                        "cost": str(cost.total_cost),
                    }
                }
            )
        permission = replace(permission, allowance=permission.allowance - cost.total_cost)
    lacking = lacking_for_storage(signer, new_amount, config)
    if lacking:
        raise _refuse({"LackBalanceForState": {"signer_id": tx.signer_id, "amount": str(lacking)}})
    if access_key.permission is not None:
        _check_function_call_permission(access_key.permission, tx)
    return Charged(
        signer=replace(signer, amount=new_amount),
        access_key=model.AccessKey(nonce=tx.nonce, permission=permission),
        cost=cost,
    )


def check_transaction(
    state: model.StateView,
    config: fees.FeeConfig,
    signed: model.SignedTransaction,
    *,
    gas_price: int,
    protocol_version: int,
    block_height: int | None,
) -> Charged:
    """`validate_transaction` then `verify_and_charge_transaction`, as nearcore runs them."""
    validate_transaction(config, signed, protocol_version)
    return verify_and_charge_transaction(state, config, signed, gas_price=gas_price, block_height=block_height)


# chain/chain/src/store `check_transaction_validity_period`


def check_validity_period(base_height: int | None, head_height: int, validity_period: int) -> None:
    """A transaction names a block: one the chain has (`base_height`, None when unknown) no more than
    `transaction_validity_period` blocks below the head the transaction would be built on, else
    "Expired"; a block above the head is on no path to it: "InvalidChain" (chain/chain/src/store/utils.rs
    `check_transaction_validity_period`, `validity_period_validate_is_ancestor`; one canonical chain
    here, so the rest of the ancestry walk always holds)."""
    if base_height is None or head_height > base_height + validity_period:
        raise _refuse("Expired")
    if base_height > head_height:
        raise _refuse("InvalidChain")
