"""The protocol versions at which the nearcore features that change a receipt's execution
results turn on (core/primitives-core/src/version.rs `ProtocolFeature::protocol_version`, as
numbered by the nearcore 2.14 release, which runs protocol 87; nearcore master renumbers its
unreleased features, so a master checkout may show other numbers for the same names).

Each rule is applied where its constant is used; the parameters that come with a feature
(min_gas_purchase_price, account_creation_charge, the rebalanced create_account fee at 85;
burnt_gas_reward 0 at 87, RemoveGasRewards) are read from the block's runtime config, not here.
"""

from __future__ import annotations

from typing import Final

# Receipt ids and action hashes hash the block height, not the block hash (utils.rs
# `create_hash_upgradable`).
BLOCK_HEIGHT_FOR_RECEIPT_ID: Final = 77
# NEP-536 (ReducedGasRefunds, 78) is assumed throughout: nearcore runs nothing below 84 (its
# MIN_SUPPORTED_PROTOCOL_VERSION), the sample chain's genesis version.
# NEP-642 (AccountCostIncrease): gas burnt at min(purchase price, block price), the price
# surplus refunded to the signer, account_creation_charge taken from it for a created account,
# the refund penalty and a contract's reward at the burn price (lib.rs `apply_action_receipt`,
# `refund_unspent_gas_and_deposits`).
ACCOUNT_COST_INCREASE: Final = 85
# actions.rs `validate_delegate_action_key`: a function-call key's delegated call with a deposit
# fails with DepositWithFunctionCall before the receiver and method checks
# (FixDelegateActionDepositWithFunctionCallError).
FIX_DELEGATE_DEPOSIT_ERROR: Final = 85
# A receipt's outcome carries ExecutionMetadata::V4: the gas profile and, per action, the
# receiver's contract just before the action ran (lib.rs `apply_action_receipt`).
EXECUTION_METADATA_V4: Final = 85


def enabled(feature_version: int, protocol_version: int) -> bool:
    """version.rs `ProtocolFeature::enabled`."""
    return protocol_version >= feature_version
