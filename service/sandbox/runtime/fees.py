"""nearcore's fees, from a block's runtime config (the `runtime_config` of EXPERIMENTAL_protocol_config,
nearcore's RuntimeConfigView): what an action costs to send and to execute, and what converting a
transaction to its receipt costs the signer (runtime/runtime/src/config.rs).

- Each fee has a send cost for a receipt to the sender itself ("sir") or to another account, and an
  execution cost (core/parameters `Fee::send_fee`, `exec_fee`); per-byte fees count the code, the
  method name and arguments, or each method name of a function-call key plus one (`total_send_fees`,
  `exec_fee`).
- A Transfer to an implicit account also pays for the account it may create (core/parameters
  `transfer_send_fee` / `transfer_exec_fee`): to a NEAR-implicit id (64 lowercase hex) create_account
  and add_full_access_key as well, to an ETH-implicit id ("0x" and 40 lowercase hex, when
  `eth_implicit_accounts` is on) or a deterministic one ("0s" and 40 lowercase hex) create_account
  as well; with `implicit_account_creation` off, a plain transfer. This is charged whether or not
  the account already exists.
- A Delegate action's send fee is the delegate fee plus its inner actions' send fees (with the outer
  receipt's sir), and the relayer prepays the inner receipt: its inner actions' send fees (with the
  inner sender == receiver), its delegate exec fee, a new action receipt's exec fee and the inner
  actions' exec fees and gas (`total_prepaid_send_fees`, `total_prepaid_exec_fees`, `total_prepaid_gas`,
  `total_deposit`).
- `tx_cost`: gas burnt at conversion = new action receipt's send fee + the actions' send fees
  (+ the signature verification cost, zero for ed25519 and secp256k1), bought at the block's gas
  price; the gas left for the receipt (prepaid gas, prepaid send fees, the receipt's and actions'
  exec fees) bought at the receipt gas price: the block's price raised by the pessimistic inflation
  ratio once per possible hop (before protocol 78, where the ratio became 1/1; config.rs of those
  versions) and, from protocol 85 (NEP-642, `min_gas_purchase_price` in the config), never below
  `min_gas_purchase_price`; the deposits on top. Sums overflowing nearcore's u64 gas or u128 balance
  raise `CostOverflow` (verifier.rs answers InvalidTxError::CostOverflow).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from nearrpc.nearcore.account_id import account_type as account_type
from nearrpc.sandbox.runtime import model

MAX_GAS: Final = 2**64 - 1  # nearcore's Gas is a u64
MAX_BALANCE: Final = 2**128 - 1  # and Balance a u128


class CostOverflow(ArithmeticError):
    """A fee sum past nearcore's integer widths (its IntegerOverflowError)."""


@dataclass(frozen=True, slots=True)
class Fee:
    """One fee of the runtime config: gas to send (to oneself or not) and to execute."""

    send_sir: int
    send_not_sir: int
    execution: int

    def send(self, sender_is_receiver: bool) -> int:
        return self.send_sir if sender_is_receiver else self.send_not_sir

    def min_send_and_exec(self) -> int:
        return min(self.send_sir, self.send_not_sir) + self.execution

    @classmethod
    def of(cls, view: Mapping[str, Any]) -> Fee:
        return cls(int(view["send_sir"]), int(view["send_not_sir"]), int(view["execution"]))


@dataclass(frozen=True, slots=True)
class FeeConfig:
    """What fees and limits a block's runtime config sets, read once per config."""

    new_action_receipt: Fee
    new_data_receipt_base: Fee
    new_data_receipt_byte: Fee
    create_account: Fee
    deploy_contract_base: Fee
    deploy_contract_byte: Fee
    function_call_base: Fee
    function_call_byte: Fee
    transfer: Fee
    stake: Fee
    add_full_access_key: Fee
    add_function_call_key_base: Fee
    add_function_call_key_byte: Fee
    delete_key: Fee
    delete_account: Fee
    delegate: Fee
    implicit_account_creation: bool
    eth_implicit_accounts: bool
    pessimistic_gas_price_inflation: tuple[int, int]
    min_gas_purchase_price: int
    storage_amount_per_byte: int
    num_bytes_account: int
    num_extra_bytes_record: int
    burnt_gas_reward: tuple[int, int]
    account_creation_charge: int
    gas_refund_penalty: tuple[int, int]
    min_gas_refund_penalty: int
    limits: Mapping[str, Any]  # wasm_config.limit_config

    @classmethod
    def from_runtime_config(cls, config: Mapping[str, Any]) -> FeeConfig:
        """From a RuntimeConfigView (numbers as nearcore shows them: u128 amounts as strings)."""
        costs = config["transaction_costs"]
        actions = costs["action_creation_config"]
        add_key = actions["add_key_cost"]
        data = costs["data_receipt_creation_config"]
        wasm = config["wasm_config"]
        storage = costs["storage_usage_config"]
        inflation = costs.get("pessimistic_gas_price_inflation_ratio", [1, 1])
        reward = costs.get("burnt_gas_reward", [0, 1])
        # NEP-536's refund penalty: RuntimeConfigView does not show it; nearcore's parameters.yaml
        # has 0/100 and a minimum of 0, and no runtime config diff up to protocol 87 changes them
        penalty = config.get("gas_refund_penalty", [0, 100])
        return cls(
            new_action_receipt=Fee.of(costs["action_receipt_creation_config"]),
            new_data_receipt_base=Fee.of(data["base_cost"]),
            new_data_receipt_byte=Fee.of(data["cost_per_byte"]),
            create_account=Fee.of(actions["create_account_cost"]),
            deploy_contract_base=Fee.of(actions["deploy_contract_cost"]),
            deploy_contract_byte=Fee.of(actions["deploy_contract_cost_per_byte"]),
            function_call_base=Fee.of(actions["function_call_cost"]),
            function_call_byte=Fee.of(actions["function_call_cost_per_byte"]),
            transfer=Fee.of(actions["transfer_cost"]),
            stake=Fee.of(actions["stake_cost"]),
            add_full_access_key=Fee.of(add_key["full_access_cost"]),
            add_function_call_key_base=Fee.of(add_key["function_call_cost"]),
            add_function_call_key_byte=Fee.of(add_key["function_call_cost_per_byte"]),
            delete_key=Fee.of(actions["delete_key_cost"]),
            delete_account=Fee.of(actions["delete_account_cost"]),
            delegate=Fee.of(actions["delegate_cost"]),
            implicit_account_creation=bool(wasm.get("implicit_account_creation", True)),
            eth_implicit_accounts=bool(wasm.get("eth_implicit_accounts", False)),
            pessimistic_gas_price_inflation=(int(inflation[0]), int(inflation[1])),
            min_gas_purchase_price=int(config.get("min_gas_purchase_price", 0)),
            storage_amount_per_byte=int(config["storage_amount_per_byte"]),
            num_bytes_account=int(storage["num_bytes_account"]),
            num_extra_bytes_record=int(storage["num_extra_bytes_record"]),
            burnt_gas_reward=(int(reward[0]), int(reward[1])),
            account_creation_charge=int(config.get("account_creation_charge", 0)),
            gas_refund_penalty=(int(penalty[0]), int(penalty[1])),
            min_gas_refund_penalty=int(config.get("min_gas_refund_penalty", 0)),
            limits=wasm["limit_config"],
        )

    def gas_penalty_for_gas_refund(self, gas_refund: int) -> int:
        """core/parameters cost.rs `gas_penalty_for_gas_refund` (NEP-536): gas_refund_penalty of
        the unused gas (rounded down), at least min_gas_refund_penalty, never more than the refund."""
        numerator, denominator = self.gas_refund_penalty
        relative = gas_refund * numerator // denominator
        return min(max(relative, self.min_gas_refund_penalty), gas_refund)

    def min_receipt_with_function_call_gas(self) -> int:
        """The least gas a receipt with a function call costs (core/parameters, for the hops of
        the pessimistic gas price)."""
        return self.new_action_receipt.min_send_and_exec() + self.function_call_base.min_send_and_exec()


def _gas(value: int) -> int:
    if value > MAX_GAS:
        raise CostOverflow("gas overflow")
    return value


def _balance(value: int) -> int:
    if value > MAX_BALANCE:
        raise CostOverflow("balance overflow")
    return value


def _implicit_fees(config: FeeConfig, receiver_id: str) -> tuple[Fee, ...]:
    """What a Transfer to `receiver_id` pays beside the transfer fee (core/parameters
    `transfer_send_fee` / `transfer_exec_fee`)."""
    kind = account_type(receiver_id)
    if not config.implicit_account_creation or kind == "NamedAccount":
        return ()
    if kind == "NearImplicitAccount":
        return (config.create_account, config.add_full_access_key)
    if kind == "NearDeterministicAccount":
        return (config.create_account,)  # created without a key, as an ETH-implicit account is
    return (config.create_account,) if config.eth_implicit_accounts else ()


def _key_bytes(permission: model.FunctionCallPermission) -> int:
    # each method name with a terminating character (config.rs `permission_send_fees`)
    return sum(len(name.encode()) + 1 for name in permission.method_names)


def send_fee(config: FeeConfig, action: model.Action, sender_is_receiver: bool, receiver_id: str) -> int:
    """The gas burnt to send one action (config.rs `total_send_fees`, one action)."""
    sir = sender_is_receiver
    match action:
        case model.CreateAccount():
            return config.create_account.send(sir)
        case model.DeployContract(code=code):
            return config.deploy_contract_base.send(sir) + config.deploy_contract_byte.send(sir) * len(code)
        case model.FunctionCall(method_name=method_name, args=args):
            size = len(method_name.encode()) + len(args)
            return config.function_call_base.send(sir) + config.function_call_byte.send(sir) * size
        case model.Transfer():
            return config.transfer.send(sir) + sum(fee.send(sir) for fee in _implicit_fees(config, receiver_id))
        case model.Stake():
            return config.stake.send(sir)
        case model.AddKey(access_key=access_key):
            permission = access_key.permission
            if permission is None:
                return config.add_full_access_key.send(sir)
            base = config.add_function_call_key_base.send(sir)
            return base + config.add_function_call_key_byte.send(sir) * _key_bytes(permission)
        case model.DeleteKey():
            return config.delete_key.send(sir)
        case model.DeleteAccount():
            return config.delete_account.send(sir)
        case model.Delegate(delegate_action=inner):
            # the delegate fee and the inner actions' send fees, at the outer receipt's sir
            return config.delegate.send(sir) + total_send_fees(config, sir, inner.actions, inner.receiver_id)
    raise TypeError(f"not an action: {action!r}")


def exec_fee(config: FeeConfig, action: model.Action, receiver_id: str) -> int:
    """The gas burnt executing one action (config.rs `exec_fee`)."""
    match action:
        case model.CreateAccount():
            return config.create_account.execution
        case model.DeployContract(code=code):
            return config.deploy_contract_base.execution + config.deploy_contract_byte.execution * len(code)
        case model.FunctionCall(method_name=method_name, args=args):
            size = len(method_name.encode()) + len(args)
            return config.function_call_base.execution + config.function_call_byte.execution * size
        case model.Transfer():
            return config.transfer.execution + sum(fee.execution for fee in _implicit_fees(config, receiver_id))
        case model.Stake():
            return config.stake.execution
        case model.AddKey(access_key=access_key):
            permission = access_key.permission
            if permission is None:
                return config.add_full_access_key.execution
            base = config.add_function_call_key_base.execution
            return base + config.add_function_call_key_byte.execution * _key_bytes(permission)
        case model.DeleteKey():
            return config.delete_key.execution
        case model.DeleteAccount():
            return config.delete_account.execution
        case model.Delegate():
            return config.delegate.execution
    raise TypeError(f"not an action: {action!r}")


def total_send_fees(
    config: FeeConfig, sender_is_receiver: bool, actions: Sequence[model.Action], receiver_id: str
) -> int:
    """config.rs `total_send_fees`."""
    total = 0
    for action in actions:
        total = _gas(total + send_fee(config, action, sender_is_receiver, receiver_id))
    return total


def total_prepaid_send_fees(config: FeeConfig, actions: Sequence[model.Action]) -> int:
    """config.rs `total_prepaid_send_fees`: the inner receipt's send fees a Delegate prepays."""
    total = 0
    for action in actions:
        if isinstance(action, model.Delegate):
            inner = action.delegate_action
            sir = inner.sender_id == inner.receiver_id
            total = _gas(total + total_send_fees(config, sir, inner.actions, inner.receiver_id))
    return total


def total_prepaid_exec_fees(config: FeeConfig, actions: Sequence[model.Action], receiver_id: str) -> int:
    """config.rs `total_prepaid_exec_fees`: the actions' exec fees, and for a Delegate its inner
    actions' exec fees, its own and the inner receipt's."""
    total = 0
    for action in actions:
        if isinstance(action, model.Delegate):
            inner = action.delegate_action
            delta = total_prepaid_exec_fees(config, inner.actions, inner.receiver_id)
            delta += exec_fee(config, action, inner.receiver_id) + config.new_action_receipt.execution
        else:
            delta = exec_fee(config, action, receiver_id)
        total = _gas(total + delta)
    return total


def total_prepaid_gas(actions: Sequence[model.Action]) -> int:
    """config.rs `total_prepaid_gas`: the gas attached to function calls, inner ones included."""
    total = 0
    for action in actions:
        if isinstance(action, model.Delegate):
            delta = total_prepaid_gas(action.delegate_action.actions)
        else:
            delta = action.gas if isinstance(action, model.FunctionCall) else 0
        total = _gas(total + delta)
    return total


def total_deposit(actions: Sequence[model.Action]) -> int:
    """config.rs `total_deposit`: the deposits, a Delegate's inner ones included (the relayer pays)."""
    total = 0
    for action in actions:
        if isinstance(action, model.Delegate):
            delta = total_deposit(action.delegate_action.actions)
        elif isinstance(action, model.FunctionCall | model.Transfer):
            delta = action.deposit
        else:
            delta = 0
        total = _balance(total + delta)
    return total


def gas_to_tokens(gas: int, gas_price: int) -> int:
    """config.rs `safe_gas_to_balance`."""
    return _balance(gas * gas_price)


def _inflated(gas_price: int, ratio: tuple[int, int], exponent: int) -> int:
    """config.rs `safe_gas_price_inflated` (of the versions that had it): rounded up."""
    numerator, denominator = ratio[0] ** exponent, ratio[1] ** exponent
    return _balance((numerator * gas_price + denominator - 1) // denominator)


@dataclass(frozen=True, slots=True)
class TransactionCost:
    """config.rs `TransactionCost`: what converting a transaction to its receipt costs."""

    gas_burnt: int  # burnt at conversion
    gas_remaining: int  # bought for the receipt: prepaid gas and the fees still to burn
    receipt_gas_price: int  # the price that gas is bought at
    burnt_amount: int  # gas_burnt at the block's gas price
    gas_cost: int  # burnt_amount and the remaining gas's price
    deposit_cost: int
    total_cost: int  # what the signer's balance must cover


def tx_cost(config: FeeConfig, transaction: model.Transaction, gas_price: int) -> TransactionCost:
    """config.rs `tx_cost` / `calculate_tx_cost`; raises CostOverflow."""
    actions = transaction.actions
    sir = transaction.signer_id == transaction.receiver_id
    # the signature's verification cost is zero for ed25519 and secp256k1 (only ML-DSA-65 pays)
    gas_burnt = _gas(
        config.new_action_receipt.send(sir) + total_send_fees(config, sir, actions, transaction.receiver_id)
    )
    prepaid_gas = _gas(total_prepaid_gas(actions) + total_prepaid_send_fees(config, actions))
    gas_remaining = _gas(
        prepaid_gas
        + config.new_action_receipt.execution
        + total_prepaid_exec_fees(config, actions, transaction.receiver_id)
    )
    receipt_gas_price = _receipt_gas_price(config, gas_price, prepaid_gas, sir)
    burnt_amount = gas_to_tokens(gas_burnt, gas_price)
    gas_cost = _balance(burnt_amount + gas_to_tokens(gas_remaining, receipt_gas_price))
    deposit_cost = total_deposit(actions)
    return TransactionCost(
        gas_burnt=gas_burnt,
        gas_remaining=gas_remaining,
        receipt_gas_price=receipt_gas_price,
        burnt_amount=burnt_amount,
        gas_cost=gas_cost,
        deposit_cost=deposit_cost,
        total_cost=_balance(gas_cost + deposit_cost),
    )


def _receipt_gas_price(config: FeeConfig, gas_price: int, prepaid_gas: int, sender_is_receiver: bool) -> int:
    price = gas_price
    if gas_price != 0 and config.pessimistic_gas_price_inflation != (1, 1):
        # the versions before 78: one inflation per hop the prepaid gas could pay for, and one for
        # the first receipt when it goes to another account
        minimum = config.min_receipt_with_function_call_gas()
        depth = prepaid_gas // minimum if minimum > 0 else 0
        exponent = (0 if sender_is_receiver else 1) + depth
        if exponent > 255:  # nearcore's exponent is a u8
            raise CostOverflow("inflation exponent overflow")
        price = _inflated(gas_price, config.pessimistic_gas_price_inflation, exponent)
    # NEP-642 (protocol 85): receipt gas is bought at no less than min_gas_purchase_price
    return max(price, config.min_gas_purchase_price)
