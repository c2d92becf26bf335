"""A contract's method run as a FunctionCall action runs it (not a view): the host functions a
view may not call, over state the caller owns.

From nearcore's near-vm-runner logic/logic.rs (`VMLogic`, one method per host function):
- the account's balance is its balance plus the attached deposit from the start
  (`VMLogic::new`: `current_account_balance`), and what the call leaves (balance, storage usage)
  is what the action writes back to the account (runtime actions.rs `action_function_call`);
- `storage_write`: `base`, `storage_write_base`, the key's and value's per-byte costs, the
  evicted value's per-byte cost; a new key adds key + value + `num_extra_bytes_record` to the
  storage usage, a replaced value its length difference; the old value goes to the register;
- `storage_remove`: `base`, `storage_remove_base`, per key byte, per removed value byte; removing
  takes key + value + `num_extra_bytes_record` off the storage usage;
- `signer_account_id`, `signer_account_pk` (borsh of the key: type byte then data),
  `predecessor_account_id`, `prepaid_gas`, `used_gas`, `attached_deposit`: `base` then the value.
Gas: a call's limit is its prepaid gas (GasExceeded) under the protocol's max_gas_burnt
(GasLimitExceeded), as logic/gas_counter.rs `process_gas_limit`; used gas equals burnt gas here
plus what the call's new receipts reserve (promises.py). The promise host functions run with a
`PromiseContext` (the runtime's fees, the callback's results); without one (a bare call) they
fail with `PromisesUnsupported`, `promise_results_count` answers 0 and `promise_result` fails as
nearcore does for an index past them. Trie nodes: `storage_write` and `storage_remove` pay
`touching_trie_node` for each node their lookup touches first in the chunk and
`read_cached_trie_node` for each touched before, where the state knows them (TrieNodes: the
sandbox's, state.py); `storage_read` and `storage_has_key` pay none, as nearcore's flat-storage
reads (protocol 61 on) track none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from nearrpc.contracts import errors
from nearrpc.contracts.engine import default_engine
from nearrpc.contracts.errors import ViewCallError
from nearrpc.contracts.gas import GasCosts, GasCounter
from nearrpc.contracts.host import HOST_FUNCTIONS, Abort, Memory, StateReader, ViewContext, ViewLogic
from nearrpc.contracts.interrupt import Interrupt
from nearrpc.contracts.promises import PromiseContext, PromiseLogic, PromiseReceipt, distribute_gas


class CallState(StateReader, Protocol):
    """The contract's storage as the call sees and changes it (the runtime's overlay)."""

    def storage_write(self, key: bytes, value: bytes) -> None: ...

    def storage_remove(self, key: bytes) -> None: ...


@runtime_checkable
class TrieNodes(Protocol):
    """A state that knows the trie nodes a write's or a removal's lookup of `key` touches: those
    touched for the first time in the chunk and those touched before (runtime/runtime/src/ext.rs
    `storage_set` / `storage_remove`: a `MemOrTrie` lookup through the chunk's accounting state,
    `commit_counts_since`). A state without it charges no trie node."""

    def trie_nodes(self, key: bytes) -> tuple[int, int]: ...

    def value_read(self, key: bytes) -> None:
        """storage_read paid for the key's value: its node is touched, uncharged."""


@dataclass(frozen=True)
class CallContext:
    """nearcore's VMContext for a FunctionCall action (runtime actions.rs `execute_function_call`):
    the view's fields (`view`, with the account's balance before the deposit) and the call's."""

    view: ViewContext
    signer_account_id: str
    signer_account_pk: bytes  # borsh of the signer's public key
    predecessor_account_id: str
    attached_deposit: int
    prepaid_gas: int
    storage_num_extra_bytes_record: int
    promises: PromiseContext | None = None  # None: the promise host functions are refused


@dataclass(frozen=True)
class CallOutcome:
    """A call that returned: its value (None: it returned nothing), logs, gas, and the account's
    balance and storage usage as it left them."""

    returned: bytes | None
    logs: list[str]
    burnt_gas: int
    used_gas: int
    balance: int
    storage_usage: int
    profile: dict[str, int]  # gas by ext cost name, and "wasm_instruction" (see _profile)
    action_profile: dict[str, int] = field(default_factory=dict)  # burnt by ActionCosts name
    receipts: list[PromiseReceipt] = field(default_factory=list)  # the receipts it created
    resumes: list[tuple[str, bytes]] = field(default_factory=list)  # yields it resumed: (data id, payload)
    return_receipt: int | None = None  # promise_return's receipt (its result is the call's)


class CallFailed(Exception):
    """A call nearcore aborts: `debug` is the FunctionCallError's Debug text (call_errors.py
    gives its outcome JSON); the logs and gas burnt until then still count."""

    def __init__(
        self,
        debug: str,
        logs: list[str],
        burnt_gas: int,
        profile: dict[str, int],
        action_profile: dict[str, int] | None = None,
    ) -> None:
        super().__init__(debug)
        self.debug = debug
        self.logs = logs
        self.burnt_gas = burnt_gas
        self.profile = profile
        self.action_profile = action_profile or {}


class CallLogic(PromiseLogic):
    """A FunctionCall's logic: a view's, plus the host functions only a call may run."""

    def __init__(self, call: CallContext, args: bytes, state: CallState, gas: GasCounter, memory: Memory) -> None:
        super().__init__(call.view, args, state, gas, memory)
        self.call = call
        self.promise_context = call.promises
        self.init_promises()
        self.writer = state
        self.trie = state if isinstance(state, TrieNodes) else None
        self.balance = call.view.account_balance + call.attached_deposit
        self.storage_usage = call.view.storage_usage

    def _stored(self, key: bytes) -> bytes | None:
        # a call writes: a key's value is the overlay's now, never one a view would keep from
        # earlier in the call (the call's state is in memory already)
        return self.writer.storage_read(key)

    # --- context --------------------------------------------------------------------------------
    def c_signer_account_id(self, register_id: int) -> None:
        self.pay("base")
        self.set_register(register_id, self.call.signer_account_id.encode())

    def c_signer_account_pk(self, register_id: int) -> None:
        self.pay("base")
        self.set_register(register_id, self.call.signer_account_pk)

    def c_predecessor_account_id(self, register_id: int) -> None:
        self.pay("base")
        self.set_register(register_id, self.call.predecessor_account_id.encode())

    def c_prepaid_gas(self) -> int:
        self.pay("base")
        return self.call.prepaid_gas

    def c_used_gas(self) -> int:
        # logic.rs `used_gas`: a call's used gas counts what its promises reserve
        self.pay("base")
        return self.gas.used  # burnt plus what promises reserved (gas_counter.rs `used_gas`)

    def c_attached_deposit(self, ptr: int) -> None:
        self.pay("base")
        self.write_memory(ptr, self.call.attached_deposit.to_bytes(16, "little"))

    def c_account_balance(self, ptr: int) -> None:
        self.pay("base")
        self.write_memory(ptr, self.balance.to_bytes(16, "little"))

    def c_storage_usage(self) -> int:
        self.pay("base")
        return self.storage_usage

    # --- storage ----------------------------------------------------------------------------------
    def c_storage_write(self, key_len: int, key_ptr: int, value_len: int, value_ptr: int, register_id: int) -> int:
        self.pay("base")
        self.pay("storage_write_base")
        key = self.memory_or_register(key_ptr, key_len)
        if len(key) > self.costs.max_length_storage_key:
            raise Abort(errors.key_length_exceeded(len(key), self.costs.max_length_storage_key))
        value = self.memory_or_register(value_ptr, value_len)
        if len(value) > self.costs.max_length_storage_value:
            raise Abort(errors.value_length_exceeded(len(value), self.costs.max_length_storage_value))
        self.pay("storage_write_key_byte", len(key))
        self.pay("storage_write_value_byte", len(value))
        # ext.rs `storage_set`: the lookup's nodes, the evicted value's bytes, then the nodes paid
        nodes = self.trie.trie_nodes(key) if self.trie is not None else (0, 0)
        evicted = self.writer.storage_read(key)
        if evicted is not None:
            self.pay("storage_write_evicted_byte", len(evicted))
        self._pay_nodes(nodes)
        self.writer.storage_write(key, value)
        if evicted is None:
            self.storage_usage += len(key) + len(value) + self.call.storage_num_extra_bytes_record
            return 0
        self.storage_usage += len(value) - len(evicted)
        self.set_register(register_id, evicted)
        return 1

    def c_storage_remove(self, key_len: int, key_ptr: int, register_id: int) -> int:
        self.pay("base")
        self.pay("storage_remove_base")
        key = self.memory_or_register(key_ptr, key_len)
        if len(key) > self.costs.max_length_storage_key:
            raise Abort(errors.key_length_exceeded(len(key), self.costs.max_length_storage_key))
        self.pay("storage_remove_key_byte", len(key))
        # ext.rs `storage_remove`: the lookup's nodes (a key absent too), the removed value's
        # bytes, then the nodes paid
        nodes = self.trie.trie_nodes(key) if self.trie is not None else (0, 0)
        removed = self.writer.storage_read(key)
        if removed is None:
            self._pay_nodes(nodes)
            return 0
        self.pay("storage_remove_ret_value_byte", len(removed))
        self._pay_nodes(nodes)
        self.writer.storage_remove(key)
        self.storage_usage -= len(key) + len(removed) + self.call.storage_num_extra_bytes_record
        self.set_register(register_id, removed)
        return 1

    def value_read(self, key: bytes) -> None:
        # logic.rs `storage_read` dereferences the value with a FreeGasCounter: uncharged, but
        # its node is touched, so a later write's lookup finds it touched before
        if self.trie is not None:
            self.trie.value_read(key)

    def _pay_nodes(self, nodes: tuple[int, int]) -> None:
        # gas_counter.rs `trie_node_touched` then `cached_trie_node_access` (ext.rs
        # `commit_counts_since`); storage_read and storage_has_key charge none: nearcore reads
        # them through flat storage, which tracks no node (core/store trie/mod.rs
        # `get_optimized_ref`: tracked only for `MemOrTrie` lookups)
        touched, cached = nodes
        self.pay("touching_trie_node", touched)
        self.pay("read_cached_trie_node", cached)


def _unsupported(name: str) -> Callable[..., int | None]:
    def refuse(logic: ViewLogic, *_args: int) -> int | None:
        logic.pay("base")
        raise Abort(errors.promises_unsupported(name))

    return refuse


def _with_context(name: str, method: Callable[..., int | None]) -> Callable[..., int | None]:
    """A promise function, refused (PromisesUnsupported) by a call the runtime gave no context."""
    refuse = _unsupported(name)

    def run(logic: CallLogic, *args: int) -> int | None:
        return (method if logic.promise_context is not None else refuse)(logic, *args)

    return run


# the promise host functions run here (promises.py); refunds, state init and the newer ones are not
_PROMISE_RUN: dict[str, Callable[..., int | None]] = {
    method.__name__.removeprefix("c_"): _with_context(method.__name__.removeprefix("c_"), method)
    for method in (
        PromiseLogic.c_promise_create,
        PromiseLogic.c_promise_then,
        PromiseLogic.c_promise_and,
        PromiseLogic.c_promise_batch_create,
        PromiseLogic.c_promise_batch_then,
        PromiseLogic.c_promise_batch_action_create_account,
        PromiseLogic.c_promise_batch_action_deploy_contract,
        PromiseLogic.c_promise_batch_action_function_call,
        PromiseLogic.c_promise_batch_action_function_call_weight,
        PromiseLogic.c_promise_batch_action_transfer,
        PromiseLogic.c_promise_batch_action_stake,
        PromiseLogic.c_promise_batch_action_add_key_with_full_access,
        PromiseLogic.c_promise_batch_action_add_key_with_function_call,
        PromiseLogic.c_promise_batch_action_delete_key,
        PromiseLogic.c_promise_batch_action_delete_account,
        PromiseLogic.c_promise_return,
        PromiseLogic.c_promise_yield_create,
        PromiseLogic.c_promise_yield_resume,
    )
}


# the functions nearcore offers calls only (with the promise functions above); the promise ones
# left of them (refund_to, state init, yields by id, gas keys) this executor does not run yet
_CALL_ONLY: dict[str, Callable[..., int | None]] = {
    method.__name__.removeprefix("c_"): method
    for method in (
        CallLogic.c_signer_account_id,
        CallLogic.c_signer_account_pk,
        CallLogic.c_predecessor_account_id,
        CallLogic.c_prepaid_gas,
        CallLogic.c_used_gas,
        CallLogic.c_attached_deposit,
        CallLogic.c_account_balance,
        CallLogic.c_storage_usage,
        CallLogic.c_storage_write,
        CallLogic.c_storage_remove,
        CallLogic.c_promise_results_count,
        CallLogic.c_promise_result,
        CallLogic.c_value_return,
    )
}
_PROMISE_FUNCTIONS = tuple(
    fn.name
    for fn in HOST_FUNCTIONS
    if fn.name not in _CALL_ONLY
    and fn.name not in _PROMISE_RUN
    and (fn.name.startswith("promise_") or fn.name in ("refund_to_account_id", "set_state_init_data_entry"))
)
CallLogic.overrides = {**_CALL_ONLY, **_PROMISE_RUN, **{name: _unsupported(name) for name in _PROMISE_FUNCTIONS}}


def run_call(
    code: bytes,
    code_hash: str,
    method_name: str,
    args: bytes,
    call: CallContext,
    state: CallState,
    costs: GasCosts,
    interrupt: Interrupt | None = None,
) -> CallOutcome:
    """Run a FunctionCall action's method as nearcore does; raises CallFailed with nearcore's
    FunctionCallError Debug text (HostFunctionUnavailable for a host function not implemented
    here, ExecutionInterrupted when `interrupt` says stop)."""
    gas = GasCounter(costs, prepaid_gas=call.prepaid_gas, profiled=True)
    logic: list[CallLogic] = []

    def make_logic(memory: Memory) -> ViewLogic:
        made = CallLogic(call, args, state, gas, memory)
        logic.append(made)
        return made

    try:
        outcome = default_engine().execute(code, code_hash, method_name, gas, make_logic, interrupt)
    except ViewCallError as failure:
        raise CallFailed(failure.debug, failure.logs, gas.burnt, _profile(gas), _actions(gas)) from None
    ran = logic[0]
    used = gas.used
    # runtime function_call.rs: the prepaid gas left goes to the calls that asked for a weight
    used += distribute_gas(ran.weights, call.prepaid_gas - used)
    return CallOutcome(
        returned=ran.returned,
        logs=outcome.logs,
        burnt_gas=outcome.burnt_gas,
        used_gas=used,
        balance=ran.balance,
        storage_usage=ran.storage_usage,
        profile=_profile(gas),
        action_profile=_actions(gas),
        receipts=ran.receipts,
        resumes=ran.resumes,
        return_receipt=ran.return_receipt,
    )


def _profile(gas: GasCounter) -> dict[str, int]:
    """The gas by cost (nearcore's ProfileDataV3): what each ext cost charged, the contract's
    loading included (the counter keeps them as nearcore's `pay_base` / `pay_per` do), and the
    rest of the burnt gas, less the actions', the wasm instructions (profile.rs
    `compute_wasm_instruction_cost`)."""
    profile = dict(gas.profile or {})
    spent = sum(profile.values()) + sum(gas.action_profile.values())
    profile["wasm_instruction"] = max(gas.burnt - spent, 0)
    return {name: value for name, value in profile.items() if value > 0}


def _actions(gas: GasCounter) -> dict[str, int]:
    """The gas the call's promises burnt, by ActionCosts name (the send fees its new receipts paid)."""
    return {name: value for name, value in gas.action_profile.items() if name and value > 0}
