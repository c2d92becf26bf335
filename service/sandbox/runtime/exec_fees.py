"""What executing a receipt's actions costs, and what its signer prepaid for them (runtime
config.rs `exec_fee`, `total_prepaid_exec_fees`, `total_prepaid_send_fees`, `total_prepaid_gas`,
`total_deposit`), from the block's runtime config (`transaction_costs`).

- a Transfer to an account that does not exist yet and is implicit also pays the account's
  creation (and, for a NEAR-implicit one, its full-access key's) execution fees
  (config.rs `transfer_exec_fee`);
- a function-call key's per-byte fee counts each method name's length plus one (config.rs,
  `AddKey` with a FunctionCall permission);
- a Delegate prepaid the execution of its inner actions, a new receipt's execution and the
  inner actions' send fees (sender == receiver decides sir).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from nearrpc.sandbox.runtime.model import (
    Action,
    AddKey,
    CreateAccount,
    Delegate,
    DeleteAccount,
    DeleteKey,
    DeployContract,
    FunctionCall,
    Stake,
    Transfer,
)

_NEAR_IMPLICIT = re.compile(r"[0-9a-f]{64}")
_ETH_IMPLICIT = re.compile(r"0x[0-9a-f]{40}")


def account_type(account_id: str) -> str:
    """near-account-id AccountType: NearImplicitAccount, EthImplicitAccount or NamedAccount."""
    if _NEAR_IMPLICIT.fullmatch(account_id):
        return "NearImplicitAccount"
    if _ETH_IMPLICIT.fullmatch(account_id):
        return "EthImplicitAccount"
    return "NamedAccount"


class Fees:
    """The fee table of one runtime config."""

    def __init__(self, runtime_config: Mapping[str, Any]) -> None:
        costs = runtime_config["transaction_costs"]
        creation = costs["action_creation_config"]
        wasm = runtime_config["wasm_config"]
        self.implicit_account_creation = bool(wasm.get("implicit_account_creation", True))
        self.eth_implicit_accounts = bool(wasm.get("eth_implicit_accounts", False))
        self.new_action_receipt: Mapping[str, int] = costs["action_receipt_creation_config"]
        self._creation = creation
        self.num_bytes_account = int(costs["storage_usage_config"]["num_bytes_account"])
        self.num_extra_bytes_record = int(costs["storage_usage_config"]["num_extra_bytes_record"])
        self.burnt_gas_reward = tuple(int(part) for part in costs["burnt_gas_reward"])

    def _fee(self, name: str, kind: str, times: int = 1) -> int:
        return int(self._creation[name][kind]) * times

    def is_implicit(self, account_id: str) -> bool:
        kind = account_type(account_id)
        return kind == "NearImplicitAccount" or (kind == "EthImplicitAccount" and self.eth_implicit_accounts)

    def _action_fee(self, action: Action, receiver_id: str, kind: str) -> int:
        if isinstance(action, CreateAccount):
            return self._fee("create_account_cost", kind)
        if isinstance(action, DeployContract):
            return self._fee("deploy_contract_cost", kind) + self._fee(
                "deploy_contract_cost_per_byte", kind, len(action.code)
            )
        if isinstance(action, FunctionCall):
            size = len(action.method_name.encode()) + len(action.args)
            return self._fee("function_call_cost", kind) + self._fee("function_call_cost_per_byte", kind, size)
        if isinstance(action, Transfer):
            return self._transfer_fee(receiver_id, kind)
        if isinstance(action, Stake):
            return self._fee("stake_cost", kind)
        if isinstance(action, AddKey):
            permission = action.access_key.permission
            add_key = self._creation["add_key_cost"]
            if permission is None:
                return int(add_key["full_access_cost"][kind])
            size = sum(len(name.encode()) + 1 for name in permission.method_names)
            return int(add_key["function_call_cost"][kind]) + int(add_key["function_call_cost_per_byte"][kind]) * size
        if isinstance(action, DeleteKey):
            return self._fee("delete_key_cost", kind)
        if isinstance(action, DeleteAccount):
            return self._fee("delete_account_cost", kind)
        return self._fee("delegate_cost", kind)

    def _transfer_fee(self, receiver_id: str, kind: str) -> int:
        fee = self._fee("transfer_cost", kind)
        if not self.implicit_account_creation:
            return fee
        account_kind = account_type(receiver_id)
        if account_kind == "NearImplicitAccount":
            full_access = int(self._creation["add_key_cost"]["full_access_cost"][kind])
            return fee + self._fee("create_account_cost", kind) + full_access
        if account_kind == "EthImplicitAccount" and self.eth_implicit_accounts:
            return fee + self._fee("create_account_cost", kind)
        return fee

    def exec_fee(self, action: Action, receiver_id: str) -> int:
        return self._action_fee(action, receiver_id, "execution")

    def send_fee(self, action: Action, receiver_id: str, sir: bool) -> int:
        return self._action_fee(action, receiver_id, "send_sir" if sir else "send_not_sir")

    @property
    def receipt_exec_fee(self) -> int:
        return int(self.new_action_receipt["execution"])

    def total_send_fees(self, sir: bool, actions: Sequence[Action], receiver_id: str) -> int:
        return sum(self.send_fee(action, receiver_id, sir) for action in actions)

    def total_prepaid_exec_fees(self, actions: Sequence[Action], receiver_id: str) -> int:
        total = 0
        for action in actions:
            if isinstance(action, Delegate):
                inner = action.delegate_action
                total += self.total_prepaid_exec_fees(inner.actions, inner.receiver_id)
                total += self.receipt_exec_fee
            total += self.exec_fee(action, receiver_id)
        return total

    def total_prepaid_send_fees(self, actions: Sequence[Action]) -> int:
        total = 0
        for action in actions:
            if isinstance(action, Delegate):
                inner = action.delegate_action
                sir = inner.sender_id == inner.receiver_id
                total += self.total_send_fees(sir, inner.actions, inner.receiver_id)
        return total


def total_prepaid_gas(actions: Sequence[Action]) -> int:
    total = 0
    for action in actions:
        if isinstance(action, FunctionCall):
            total += action.gas
        elif isinstance(action, Delegate):
            total += total_prepaid_gas(action.delegate_action.actions)
    return total


def total_deposit(actions: Sequence[Action]) -> int:
    total = 0
    for action in actions:
        if isinstance(action, Transfer | FunctionCall):
            total += action.deposit
        elif isinstance(action, Delegate):
            total += total_deposit(action.delegate_action.actions)
    return total
