"""The promise host functions of a FunctionCall: the receipts a call creates, their actions, the
data dependencies between them, and what each costs the call.

From nearcore's near-vm-runner logic/logic.rs (one method per host function) and
runtime/runtime/src/receipt_manager.rs (`ReceiptManager`):
- a promise is one new receipt or, from `promise_and`, a joint promise standing for several;
  actions go to a receipt only (CannotAppendActionToJointPromise), only a receipt can be returned
  (CannotReturnJointPromise); an index past the promises is InvalidPromiseIndex; the count is
  bounded by `max_promises_per_function_call_action` (`checked_push_promise`), and a joint
  promise's receipts by `max_number_input_data_dependencies`;
- a new receipt burns its send fee (`new_action_receipt`, sir when it goes to the current
  account) and reserves its exec fee; each receipt it waits on adds `new_data_receipt_base`'s
  send (sir when the awaited receipt goes to the same account) and exec fee, both burnt
  (`pay_gas_for_new_receipt`); an action burns its send fee and reserves its exec fee
  (`pay_action_base`, `pay_action_per_byte`), a function call reserves its gas too (`prepay_gas`)
  and its deposit, like a transfer's, leaves the balance (`deduct_balance`: BalanceExceeded);
- account ids read by a promise cost `utf8_decoding_base` and `utf8_decoding_byte` per byte
  (`read_and_parse_account_id`: BadUTF8, InvalidAccountId); public keys are borsh (a key type
  byte, then 32 bytes for ed25519 or 64 for secp256k1; anything else InvalidPublicKey when the
  action is appended, after its fees);
- `value_return` pays, per output data receiver, the data receipt's per-byte send and exec fees
  for the value (burnt); `promise_return` makes a receipt's result the call's;
- `promise_results_count` / `promise_result` read the results the runtime hands a callback
  (Successful: 1 and the value in the register; Failed: 2);
- after a call that succeeded, the prepaid gas it left unused goes to the function calls that
  asked for a weight (`ReceiptManager::distribute_gas`, called by runtime function_call.rs):
  each gets unused * weight // total weight, the last one the remainder.
- data ids come from the runtime (`PromiseContext.data_id`: ext.rs `generate_data_id`, one
  counter per call), one per receipt a new receipt follows, and one per yield;
- `promise_yield_create` (`base`, `yield_create_base`, `yield_create_byte` per byte of method
  name and arguments, the callback's gas reserved, a receipt to the current account waiting on
  one data id, then its function call's send fees) writes the yield's data id to a register;
  `promise_yield_resume` (`base`, `yield_resume_base`, `yield_resume_byte` per payload byte;
  YieldPayloadLength past `max_yield_payload_size`, DataIdMalformed for an id not 32 bytes long)
  answers 1 and sends the payload when the account has that yield waiting (in the state, or made
  by this very call: ext.rs `submit_promise_resume_data`), else 0.
The newer ones (refund_to, state init, global contracts, gas keys, yields by id) are not run
here: they fail with PromisesUnsupported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import based58

from nearrpc.contracts import errors
from nearrpc.contracts.gas import GasExhausted
from nearrpc.contracts.host import Abort, ViewLogic
from nearrpc.nearcore.account_id import account_id_problem, account_type

_U64_MAX = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class Fee:
    send_sir: int
    send_not_sir: int
    execution: int

    def send(self, sir: bool) -> int:
        return self.send_sir if sir else self.send_not_sir


@dataclass(frozen=True)
class ActionFees:
    """The fees (by nearcore's ActionCosts name) and limits a call's promises pay and keep to, from
    a block's RuntimeConfigView."""

    fees: Mapping[str, Fee]
    implicit_account_creation: bool
    eth_implicit_accounts: bool
    max_promises: int | None
    max_input_dependencies: int
    max_contract_size: int
    max_yield_payload_size: int = 1024

    @classmethod
    def from_runtime_config(cls, config: Mapping[str, Any]) -> ActionFees:
        costs = config["transaction_costs"]
        actions = costs["action_creation_config"]
        add_key = actions["add_key_cost"]
        data = costs["data_receipt_creation_config"]
        limits = config["wasm_config"]["limit_config"]

        def fee(view: Mapping[str, Any]) -> Fee:
            return Fee(int(view["send_sir"]), int(view["send_not_sir"]), int(view["execution"]))

        fees = {
            "new_action_receipt": fee(costs["action_receipt_creation_config"]),
            "new_data_receipt_base": fee(data["base_cost"]),
            "new_data_receipt_byte": fee(data["cost_per_byte"]),
            "create_account": fee(actions["create_account_cost"]),
            "deploy_contract_base": fee(actions["deploy_contract_cost"]),
            "deploy_contract_byte": fee(actions["deploy_contract_cost_per_byte"]),
            "function_call_base": fee(actions["function_call_cost"]),
            "function_call_byte": fee(actions["function_call_cost_per_byte"]),
            "transfer": fee(actions["transfer_cost"]),
            "stake": fee(actions["stake_cost"]),
            "add_full_access_key": fee(add_key["full_access_cost"]),
            "add_function_call_key_base": fee(add_key["function_call_cost"]),
            "add_function_call_key_byte": fee(add_key["function_call_cost_per_byte"]),
            "delete_key": fee(actions["delete_key_cost"]),
            "delete_account": fee(actions["delete_account_cost"]),
        }
        promises = limits.get("max_promises_per_function_call_action")
        return cls(
            fees=fees,
            implicit_account_creation=bool(config["wasm_config"].get("implicit_account_creation", True)),
            eth_implicit_accounts=bool(config["wasm_config"].get("eth_implicit_accounts", False)),
            max_promises=None if promises is None else int(promises),
            max_input_dependencies=int(limits.get("max_number_input_data_dependencies") or 128),
            max_contract_size=int(limits.get("max_contract_size") or 4 << 20),
            max_yield_payload_size=int(limits.get("max_yield_payload_size") or 1024),
        )

    def transfer(self, receiver_id: str, sir: bool) -> tuple[int, int]:
        """core/parameters `transfer_send_fee` / `transfer_exec_fee`: a transfer to an implicit id
        pays for the account it may create."""
        extra: tuple[str, ...] = ()
        kind = account_type(receiver_id)
        if self.implicit_account_creation and kind != "NamedAccount":
            if kind == "NearImplicitAccount":
                extra = ("create_account", "add_full_access_key")
            elif kind == "NearDeterministicAccount" or self.eth_implicit_accounts:
                extra = ("create_account",)
        fees = [self.fees["transfer"], *(self.fees[name] for name in extra)]
        return sum(fee.send(sir) for fee in fees), sum(fee.execution for fee in fees)


def _sample_data_id(index: int) -> bytes:
    """A call's n-th data id where no runtime gives one (a bare call's tests)."""
    return hashlib.sha256(b"data id %d" % index).digest()


@dataclass(frozen=True)
class PromiseContext:
    """What a call's promises need from the runtime: the fees, the results of the receipts a
    callback waited on (None: Failed), the accounts its value goes to (output data receivers), the
    call's n-th data id (32 bytes), and whether the account has a yield waiting on a data id."""

    fees: ActionFees
    results: tuple[bytes | None, ...] = ()
    output_data_receivers: tuple[str, ...] = ()
    data_id: Callable[[int], bytes] = _sample_data_id
    yield_waiting: Callable[[str], bool] = lambda _data_id: False


# the actions a promise carries (public keys in their text form, "ed25519:<base58>")
@dataclass(frozen=True, slots=True)
class NewCreateAccount:
    pass


@dataclass(frozen=True, slots=True)
class NewDeployContract:
    code: bytes


@dataclass(slots=True)
class NewFunctionCall:
    method_name: str
    args: bytes
    gas: int
    deposit: int


@dataclass(frozen=True, slots=True)
class NewTransfer:
    deposit: int


@dataclass(frozen=True, slots=True)
class NewStake:
    stake: int
    public_key: str


@dataclass(frozen=True, slots=True)
class NewAddKey:
    public_key: str
    nonce: int
    # None: full access; else (allowance or None, receiver_id, method names)
    permission: tuple[int | None, str, tuple[str, ...]] | None


@dataclass(frozen=True, slots=True)
class NewDeleteKey:
    public_key: str


@dataclass(frozen=True, slots=True)
class NewDeleteAccount:
    beneficiary_id: str


NewAction = (
    NewCreateAccount
    | NewDeployContract
    | NewFunctionCall
    | NewTransfer
    | NewStake
    | NewAddKey
    | NewDeleteKey
    | NewDeleteAccount
)


@dataclass
class PromiseReceipt:
    """A receipt the call creates (receipt_manager.rs ReceiptMetadata): its receiver, the data ids
    it waits for (base58), where its result goes ((data id, receiver) pairs), its actions, and
    whether it is a yield (waiting for a resume)."""

    receiver_id: str
    input_data_ids: list[str] = field(default_factory=list)
    output_data_receivers: list[tuple[str, str]] = field(default_factory=list)
    actions: list[NewAction] = field(default_factory=list)
    is_yield: bool = False


def _public_key_text(raw: bytes) -> str | None:
    """A borsh PublicKey as text, None when it is none (logic.rs `PublicKeyBuffer::decode`)."""
    if len(raw) == 33 and raw[0] == 0:
        return "ed25519:" + based58.b58encode(raw[1:]).decode()
    if len(raw) == 65 and raw[0] == 1:
        return "secp256k1:" + based58.b58encode(raw[1:]).decode()
    return None


def distribute_gas(weights: list[tuple[NewFunctionCall, int]], unused: int) -> int:
    """receipt_manager.rs `distribute_gas`: the gas given out (0 or all of `unused`)."""
    total = sum(weight for _, weight in weights)
    if total == 0 or unused <= 0:
        return 0
    given = 0
    for index, (action, weight) in enumerate(weights):
        share = unused * weight // total
        if index == len(weights) - 1:
            share = unused - given
        action.gas += share
        given += share
    return given


class PromiseLogic(ViewLogic):
    """The promise host functions over a call's logic (contracts.call.CallLogic)."""

    balance: int
    promise_context: PromiseContext | None

    def init_promises(self) -> None:
        self.receipts: list[PromiseReceipt] = []
        self.promises: list[list[int]] = []  # each promise: [receipt index], or a joint promise's receipts
        self.joint: list[bool] = []
        self.weights: list[tuple[NewFunctionCall, int]] = []
        self.return_receipt: int | None = None
        self.data_count = 0
        self.resumes: list[tuple[str, bytes]] = []  # (data id, payload) of the yields resumed

    # --- gas ----------------------------------------------------------------------------------------
    def _fees(self) -> ActionFees:
        context = self.promise_context
        assert context is not None, "promise functions run only with a promise context"
        return context.fees

    def deduct(self, burn: int, use: int, action: str | None) -> None:
        # the counter's action profile gets what was burnt under `action` (None: gas only reserved)
        try:
            self.gas.deduct(burn, use, action or "")
        except GasExhausted:
            raise Abort(self.gas.exhausted_text) from None

    def pay_action_base(self, name: str, sir: bool) -> None:
        fee = self._fees().fees[name]
        self.deduct(fee.send(sir), fee.send(sir) + fee.execution, name)

    def pay_action_per_byte(self, name: str, length: int, sir: bool) -> None:
        fee = self._fees().fees[name]
        self.deduct(fee.send(sir) * length, (fee.send(sir) + fee.execution) * length, name)

    def _deduct_balance(self, amount: int) -> None:
        if amount > self.balance:
            raise Abort(errors.balance_exceeded())
        self.balance -= amount

    # --- reading arguments ------------------------------------------------------------------------------
    def _account_id(self, ptr: int, length: int) -> str:
        raw = self.memory_or_register(ptr, length)
        self.pay("utf8_decoding_base")
        self.pay("utf8_decoding_byte", len(raw))
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            raise Abort(errors.bad_utf8()) from None
        if account_id_problem(text) is not None:
            raise Abort(errors.invalid_account_id())
        return text

    def _u128(self, ptr: int) -> int:
        return int.from_bytes(self.read_memory(ptr, 16), "little")

    def _receipt_of(self, promise_idx: int) -> tuple[int, bool]:
        """logic.rs `promise_idx_to_receipt_idx_with_sir`."""
        if promise_idx >= len(self.promises):
            raise Abort(errors.invalid_promise_index(promise_idx))
        if self.joint[promise_idx]:
            raise Abort(errors.cannot_append_action_to_joint_promise())
        receipt_idx = self.promises[promise_idx][0]
        return receipt_idx, self.receipts[receipt_idx].receiver_id == self.context.account_id

    def _push(self, receipts: list[int], joint: bool) -> int:
        """logic.rs `checked_push_promise`."""
        self.promises.append(receipts)
        self.joint.append(joint)
        limit = self._fees().max_promises
        if limit is not None and len(self.promises) > limit:
            raise Abort(errors.number_promises_exceeded(len(self.promises), limit))
        return len(self.promises) - 1

    def _pay_new_receipt(self, sir: bool, dependencies: list[bool]) -> None:
        """logic.rs `pay_gas_for_new_receipt`: `dependencies`, whether each awaited receipt goes
        to the same account as the new one."""
        fees = self._fees().fees
        burn = fees["new_action_receipt"].send(sir)
        data = fees["new_data_receipt_base"]
        for same in dependencies:
            burn += data.send(same) + data.execution
        self.deduct(burn, burn + fees["new_action_receipt"].execution, "new_action_receipt")

    def _next_data_id(self) -> str:
        context = self.promise_context
        assert context is not None
        raw = context.data_id(self.data_count)
        self.data_count += 1
        return based58.b58encode(raw).decode()

    def _new_receipt(self, receiver_id: str, depends_on: list[int]) -> int:
        """The fees, then the receipt (receipt_manager.rs `create_receipt`): one new data id per
        receipt it follows, which sends its result there."""
        sir = receiver_id == self.context.account_id
        self._pay_new_receipt(sir, [self.receipts[index].receiver_id == receiver_id for index in depends_on])
        new = PromiseReceipt(receiver_id)
        for index in depends_on:
            data_id = self._next_data_id()
            new.input_data_ids.append(data_id)
            self.receipts[index].output_data_receivers.append((data_id, receiver_id))
        self.receipts.append(new)
        return len(self.receipts) - 1

    # --- creating promises -------------------------------------------------------------------------------
    def c_promise_create(
        self, account_len: int, account_ptr: int, name_len: int, name_ptr: int, args_len: int, args_ptr: int,
        amount_ptr: int, gas: int,
    ) -> int:  # fmt: skip
        promise_idx = self.c_promise_batch_create(account_len, account_ptr)
        self.c_promise_batch_action_function_call_weight(
            promise_idx, name_len, name_ptr, args_len, args_ptr, amount_ptr, gas, 0
        )
        return promise_idx

    def c_promise_then(
        self, promise_idx: int, account_len: int, account_ptr: int, name_len: int, name_ptr: int, args_len: int,
        args_ptr: int, amount_ptr: int, gas: int,
    ) -> int:  # fmt: skip
        new_idx = self.c_promise_batch_then(promise_idx, account_len, account_ptr)
        self.c_promise_batch_action_function_call_weight(
            new_idx, name_len, name_ptr, args_len, args_ptr, amount_ptr, gas, 0
        )
        return new_idx

    def c_promise_and(self, ids_ptr: int, count: int) -> int:
        self.pay("base")
        self.pay("promise_and_base")
        length = count * 8
        if length > _U64_MAX:
            raise Abort(errors.host_error("IntegerOverflow"))
        self.pay("promise_and_per_promise", length)
        raw = self.read_memory(ids_ptr, length)
        receipts: list[int] = []
        limit = self._fees().max_input_dependencies
        for offset in range(0, length, 8):
            promise_idx = int.from_bytes(raw[offset : offset + 8], "little")
            if promise_idx >= len(self.promises):
                raise Abort(errors.invalid_promise_index(promise_idx))
            receipts.extend(self.promises[promise_idx])
            if len(receipts) > limit:
                raise Abort(errors.number_input_data_dependencies_exceeded(len(receipts), limit))
        return self._push(receipts, joint=True)

    def c_promise_batch_create(self, account_len: int, account_ptr: int) -> int:
        self.pay("base")
        receiver_id = self._account_id(account_ptr, account_len)
        return self._push([self._new_receipt(receiver_id, [])], joint=False)

    def c_promise_batch_then(self, promise_idx: int, account_len: int, account_ptr: int) -> int:
        self.pay("base")
        receiver_id = self._account_id(account_ptr, account_len)
        if promise_idx >= len(self.promises):
            raise Abort(errors.invalid_promise_index(promise_idx))
        return self._push([self._new_receipt(receiver_id, self.promises[promise_idx])], joint=False)

    # --- actions ---------------------------------------------------------------------------------------
    def _append(self, receipt_idx: int, action: NewAction) -> None:
        self.receipts[receipt_idx].actions.append(action)

    def c_promise_batch_action_create_account(self, promise_idx: int) -> None:
        self.pay("base")
        receipt_idx, sir = self._receipt_of(promise_idx)
        self.pay_action_base("create_account", sir)
        self._append(receipt_idx, NewCreateAccount())

    def c_promise_batch_action_deploy_contract(self, promise_idx: int, code_len: int, code_ptr: int) -> None:
        self.pay("base")
        code = self.memory_or_register(code_ptr, code_len)
        limit = self._fees().max_contract_size
        if len(code) > limit:
            raise Abort(errors.contract_size_exceeded(len(code), limit))
        receipt_idx, sir = self._receipt_of(promise_idx)
        self.pay_action_base("deploy_contract_base", sir)
        self.pay_action_per_byte("deploy_contract_byte", len(code), sir)
        self._append(receipt_idx, NewDeployContract(code))

    def c_promise_batch_action_function_call(
        self, promise_idx: int, name_len: int, name_ptr: int, args_len: int, args_ptr: int, amount_ptr: int, gas: int
    ) -> None:
        self.c_promise_batch_action_function_call_weight(
            promise_idx, name_len, name_ptr, args_len, args_ptr, amount_ptr, gas, 0
        )

    def c_promise_batch_action_function_call_weight(
        self, promise_idx: int, name_len: int, name_ptr: int, args_len: int, args_ptr: int, amount_ptr: int,
        gas: int, weight: int,
    ) -> None:  # fmt: skip
        self.pay("base")
        amount = self._u128(amount_ptr)
        name = self.memory_or_register(name_ptr, name_len)
        if not name:
            raise Abort(errors.empty_method_name())
        args = self.memory_or_register(args_ptr, args_len)
        receipt_idx, sir = self._receipt_of(promise_idx)
        self.pay_action_base("function_call_base", sir)
        self.pay_action_per_byte("function_call_byte", len(name) + len(args), sir)
        self.deduct(0, gas, None)  # gas_counter.rs `prepay_gas`
        self._deduct_balance(amount)
        try:
            method_name = name.decode()
        except UnicodeDecodeError:
            raise Abort(errors.invalid_method_name()) from None
        action = NewFunctionCall(method_name, args, gas, amount)
        self._append(receipt_idx, action)
        if weight > 0:
            self.weights.append((action, weight))

    def c_promise_batch_action_transfer(self, promise_idx: int, amount_ptr: int) -> None:
        self.pay("base")
        amount = self._u128(amount_ptr)
        receipt_idx, sir = self._receipt_of(promise_idx)
        send, execution = self._fees().transfer(self.receipts[receipt_idx].receiver_id, sir)
        self.deduct(send, send + execution, "transfer")
        self._deduct_balance(amount)
        self._append(receipt_idx, NewTransfer(amount))

    def _public_key(self, raw: bytes) -> str:
        text = _public_key_text(raw)
        if text is None:
            raise Abort(errors.invalid_public_key())
        return text

    def c_promise_batch_action_stake(self, promise_idx: int, amount_ptr: int, key_len: int, key_ptr: int) -> None:
        self.pay("base")
        amount = self._u128(amount_ptr)
        raw = self.memory_or_register(key_ptr, key_len)
        receipt_idx, sir = self._receipt_of(promise_idx)
        self.pay_action_base("stake", sir)
        self._append(receipt_idx, NewStake(amount, self._public_key(raw)))

    def c_promise_batch_action_add_key_with_full_access(
        self, promise_idx: int, key_len: int, key_ptr: int, nonce: int
    ) -> None:
        self.pay("base")
        raw = self.memory_or_register(key_ptr, key_len)
        receipt_idx, sir = self._receipt_of(promise_idx)
        self.pay_action_base("add_full_access_key", sir)
        self._append(receipt_idx, NewAddKey(self._public_key(raw), nonce, None))

    def c_promise_batch_action_add_key_with_function_call(
        self, promise_idx: int, key_len: int, key_ptr: int, nonce: int, allowance_ptr: int, receiver_len: int,
        receiver_ptr: int, names_len: int, names_ptr: int,
    ) -> None:  # fmt: skip
        self.pay("base")
        raw = self.memory_or_register(key_ptr, key_len)
        allowance = self._u128(allowance_ptr)
        receiver_id = self._account_id(receiver_ptr, receiver_len)
        raw_names = self.memory_or_register(names_ptr, names_len)
        names = raw_names.split(b",") if raw_names else []  # logic.rs `split_method_names`
        if any(not name for name in names):
            raise Abort(errors.empty_method_name())
        receipt_idx, sir = self._receipt_of(promise_idx)
        self.pay_action_base("add_function_call_key_base", sir)
        self.pay_action_per_byte("add_function_call_key_byte", sum(len(name) + 1 for name in names), sir)
        public_key = self._public_key(raw)
        try:
            method_names = tuple(name.decode() for name in names)
        except UnicodeDecodeError:
            raise Abort(errors.invalid_method_name()) from None
        permission = (allowance or None, receiver_id, method_names)
        self._append(receipt_idx, NewAddKey(public_key, nonce, permission))

    def c_promise_batch_action_delete_key(self, promise_idx: int, key_len: int, key_ptr: int) -> None:
        self.pay("base")
        raw = self.memory_or_register(key_ptr, key_len)
        receipt_idx, sir = self._receipt_of(promise_idx)
        self.pay_action_base("delete_key", sir)
        self._append(receipt_idx, NewDeleteKey(self._public_key(raw)))

    def c_promise_batch_action_delete_account(self, promise_idx: int, account_len: int, account_ptr: int) -> None:
        self.pay("base")
        beneficiary_id = self._account_id(account_ptr, account_len)
        receipt_idx, sir = self._receipt_of(promise_idx)
        self.pay_action_base("delete_account", sir)
        self._append(receipt_idx, NewDeleteAccount(beneficiary_id))

    # --- yield and resume -------------------------------------------------------------------------------
    def c_promise_yield_create(
        self, name_len: int, name_ptr: int, args_len: int, args_ptr: int, gas: int, weight: int, register_id: int
    ) -> int:
        self.pay("base")
        self.pay("yield_create_base")
        name = self.memory_or_register(name_ptr, name_len)
        if not name:
            raise Abort(errors.empty_method_name())
        args = self.memory_or_register(args_ptr, args_len)
        length = len(name) + len(args)
        self.pay("yield_create_byte", length)
        self.deduct(0, gas, None)  # the callback's gas, reserved now
        self._pay_new_receipt(True, [True])
        data_id = self._next_data_id()
        account_id = self.context.account_id
        self.receipts.append(PromiseReceipt(account_id, [data_id], is_yield=True))
        receipt_idx = len(self.receipts) - 1
        promise_idx = self._push([receipt_idx], joint=False)
        self.pay_action_base("function_call_base", True)
        self.pay_action_per_byte("function_call_byte", length, True)
        try:
            method_name = name.decode()
        except UnicodeDecodeError:
            raise Abort(errors.invalid_method_name()) from None
        action = NewFunctionCall(method_name, args, gas, 0)
        self._append(receipt_idx, action)
        if weight > 0:
            self.weights.append((action, weight))
        self.set_register(register_id, based58.b58decode(data_id.encode()))
        return promise_idx

    def c_promise_yield_resume(self, id_len: int, id_ptr: int, payload_len: int, payload_ptr: int) -> int:
        self.pay("base")
        self.pay("yield_resume_base")
        self.pay("yield_resume_byte", payload_len)
        raw_id = self.memory_or_register(id_ptr, id_len)
        payload = self.memory_or_register(payload_ptr, payload_len)
        limit = self._fees().max_yield_payload_size
        if len(payload) > limit:
            raise Abort(errors.host_error(f"YieldPayloadLength {{ length: {len(payload)}, limit: {limit} }}"))
        if len(raw_id) != 32:
            raise Abort(errors.host_error("DataIdMalformed"))
        data_id = based58.b58encode(raw_id).decode()
        context = self.promise_context
        assert context is not None
        made_here = any(receipt.is_yield and receipt.input_data_ids == [data_id] for receipt in self.receipts)
        if not (context.yield_waiting(data_id) or made_here):
            return 0
        self.resumes.append((data_id, payload))
        return 1

    # --- results and the call's own result ------------------------------------------------------------
    def c_promise_results_count(self) -> int:
        self.pay("base")
        context = self.promise_context
        return 0 if context is None else len(context.results)

    def c_promise_result(self, result_idx: int, register_id: int) -> int:
        self.pay("base")
        context = self.promise_context
        results = () if context is None else context.results
        if result_idx >= len(results):
            raise Abort(errors.invalid_promise_result_index(result_idx))
        value = results[result_idx]
        if value is None:
            return 2
        self.set_register(register_id, value)
        return 1

    def c_promise_return(self, promise_idx: int) -> None:
        self.pay("base")
        self.pay("promise_return")
        if promise_idx >= len(self.promises):
            raise Abort(errors.invalid_promise_index(promise_idx))
        if self.joint[promise_idx]:
            raise Abort(errors.cannot_return_joint_promise())
        self.return_receipt = self.promises[promise_idx][0]

    def c_value_return(self, value_len: int, value_ptr: int) -> None:
        self.pay("base")
        value = self.memory_or_register(value_ptr, value_len)
        if len(value) > self.costs.max_length_returned_data:
            raise Abort(errors.returned_value_length_exceeded(len(value), self.costs.max_length_returned_data))
        context = self.promise_context
        if context is not None and context.output_data_receivers:
            fee = context.fees.fees["new_data_receipt_byte"]
            burn = sum(
                (fee.send(receiver == self.context.account_id) + fee.execution) * len(value)
                for receiver in context.output_data_receivers
            )
            self.deduct(burn, burn, "new_data_receipt_byte")
        self._hold(len(self.returned or b""), len(value))
        self.returned = value
        self.return_receipt = None
