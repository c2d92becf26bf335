"""A transaction's verification against the state and its charges (verifier.rs
`verify_and_charge_tx_ephemeral`, config.rs `tx_cost`).

Interim: the checks the conversion needs until the verifier room's own module lands (sbx-verify):
the signer and its key, the nonce bounds, the function-call key's permission, the cost against
balance and allowance, the signer's storage stake. The signer pays the send fees (burnt now) and
prepays the receipt's execution and attached gas at the receipt's gas price (fees.tx_cost) plus the
attached deposits.
"""

from __future__ import annotations

import dataclasses

from nearrpc.sandbox.runtime.actions import ACCESS_KEY_NONCE_RANGE_MULTIPLIER, Env
from nearrpc.sandbox.runtime.fees import CostOverflow, tx_cost
from nearrpc.sandbox.runtime.model import FunctionCall, SignedTransaction, TransactionRefused

ZERO_BALANCE_ACCOUNT_STORAGE_LIMIT = 770


def verify_and_charge(env: Env, signed: SignedTransaction) -> tuple[int, int]:
    """Charge the signer in the overlay's receipt layer; (gas burnt, the receipt's gas price).
    Raises TransactionRefused with nearcore's InvalidTxError JSON."""
    tx = signed.transaction
    overlay, fees, context = env.overlay, env.fees, env.context
    account = overlay.account(tx.signer_id)
    if account is None:
        raise TransactionRefused({"SignerDoesNotExist": {"signer_id": tx.signer_id}})
    access_key = overlay.access_key(tx.signer_id, tx.public_key)
    if access_key is None:
        missing = {"AccessKeyNotFound": {"account_id": tx.signer_id, "public_key": tx.public_key}}
        raise TransactionRefused({"InvalidAccessKeyError": missing})
    if tx.nonce <= access_key.nonce:
        raise TransactionRefused({"InvalidNonce": {"tx_nonce": tx.nonce, "ak_nonce": access_key.nonce}})
    upper_bound = context.height * ACCESS_KEY_NONCE_RANGE_MULTIPLIER
    if tx.nonce >= upper_bound:
        raise TransactionRefused({"NonceTooLarge": {"tx_nonce": tx.nonce, "upper_bound": upper_bound}})
    try:
        charges = tx_cost(fees, tx, context.gas_price)
    except CostOverflow:
        raise TransactionRefused({"CostOverflow": None}) from None
    cost = charges.total_cost
    if account.amount < cost:
        refusal = {"signer_id": tx.signer_id, "balance": str(account.amount), "cost": str(cost)}
        raise TransactionRefused({"NotEnoughBalance": refusal})
    permission = access_key.permission
    if permission is not None:
        if permission.allowance is not None and permission.allowance < cost:
            short = {
                "account_id": tx.signer_id,
                "public_key": tx.public_key,
                "allowance": str(permission.allowance),
                "cost": str(cost),
            }
            raise TransactionRefused({"InvalidAccessKeyError": {"NotEnoughAllowance": short}})
        only = tx.actions[0] if len(tx.actions) == 1 else None
        if not isinstance(only, FunctionCall):
            raise TransactionRefused({"InvalidAccessKeyError": "RequiresFullAccess"})
        if only.deposit > 0:
            raise TransactionRefused({"InvalidAccessKeyError": "DepositWithFunctionCall"})
        if tx.receiver_id != permission.receiver_id:
            mismatch = {"tx_receiver": tx.receiver_id, "ak_receiver": permission.receiver_id}
            raise TransactionRefused({"InvalidAccessKeyError": {"ReceiverMismatch": mismatch}})
        if permission.method_names and only.method_name not in permission.method_names:
            raise TransactionRefused(
                {"InvalidAccessKeyError": {"MethodNameMismatch": {"method_name": only.method_name}}}
            )
        if permission.allowance is not None:
            permission = dataclasses.replace(permission, allowance=permission.allowance - cost)
    charged = dataclasses.replace(account, amount=account.amount - cost)
    required = charged.storage_usage * fees.storage_amount_per_byte
    if charged.amount + charged.locked < required and charged.storage_usage > ZERO_BALANCE_ACCOUNT_STORAGE_LIMIT:
        lacking = {"signer_id": tx.signer_id, "amount": str(required - charged.amount - charged.locked)}
        raise TransactionRefused({"LackBalanceForState": lacking})
    overlay.set_account(tx.signer_id, charged)
    overlay.set_access_key(
        tx.signer_id, tx.public_key, dataclasses.replace(access_key, nonce=tx.nonce, permission=permission)
    )
    return charges.gas_burnt, charges.receipt_gas_price
