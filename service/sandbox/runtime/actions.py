"""Each action of a receipt executed as nearcore's runtime executes it (runtime/runtime/src
actions.rs; lib.rs `apply_action` for the checks before each action).

An action starts from its execution fee (config.rs `exec_fee`), then the account checks
(actions.rs `check_account_existence`, `check_actor_permissions`), then its own rules, each
failure an ActionErrorKind as nearcore writes it in JSON (balances as decimal strings). The
account is the receipt's working copy (`Acting.account`): the receipt writes it back once all
its actions succeeded (lib.rs `apply_action_receipt`); keys, code and contract data go straight
to the receipt's layer of the overlay, dropped with it on a failure.

Left out here (documented gaps): the minimum stake (InsufficientStake needs the epoch's seat
price, which the block context does not carry: any positive stake passes), ETH-implicit
account creation (it deploys nearcore's wallet contract, not available here: refused as
AccountDoesNotExist), global contracts, and validator proposals (a stake locks the balance at
once, as the action does in nearcore; the epoch's validator set is the chain writer's).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import based58

from nearrpc.contracts.call import CallContext, CallFailed, run_call
from nearrpc.contracts.call_errors import function_call_error
from nearrpc.contracts.errors import HostFunctionUnavailable
from nearrpc.contracts.gas import GasCosts
from nearrpc.contracts.host import ViewContext
from nearrpc.contracts.promises import ActionFees, PromiseContext
from nearrpc.nearcore.transaction import public_key_bytes
from nearrpc.sandbox.runtime import features, fees
from nearrpc.sandbox.runtime.fees import FeeConfig, account_type
from nearrpc.sandbox.runtime.ids import IdMaker, random_seed
from nearrpc.sandbox.runtime.model import (
    NO_CODE_HASH,
    AccessKey,
    Account,
    Action,
    AddKey,
    BlockContext,
    CreateAccount,
    Delegate,
    DelegateAction,
    DeleteAccount,
    DeleteKey,
    DeployContract,
    FunctionCall,
    Stake,
    TransactionRefused,
    Transfer,
)
from nearrpc.sandbox.runtime.promised import new_receipts
from nearrpc.sandbox.runtime.receipts import (
    EMPTY_PUBLIC_KEY,
    SYSTEM,
    ActionReceipt,
    NewData,
    NewReceipt,
    access_key_borsh_len,
)
from nearrpc.sandbox.runtime.signature import verify_delegate
from nearrpc.sandbox.runtime.state import ContractStorage, Overlay
from nearrpc.sandbox.runtime.verifier import ACCESS_KEY_NONCE_RANGE_MULTIPLIER, validate_actions

# core/primitives account.rs
MAX_ACCOUNT_DELETION_STORAGE_USAGE = 10_000


def balance_refund(receiver_id: str, amount: int) -> NewReceipt:
    # receipt.rs `Receipt::new_balance_refund`
    return NewReceipt(SYSTEM, receiver_id, SYSTEM, EMPTY_PUBLIC_KEY, 0, (Transfer(amount),))


def gas_refund(signer_id: str, amount: int, signer_public_key: str) -> NewReceipt:
    # receipt.rs `Receipt::new_gas_refund`
    return NewReceipt(SYSTEM, signer_id, signer_id, signer_public_key, 0, (Transfer(amount),))


@dataclass
class ActionResult:
    """lib.rs ActionResult: gas, the outcome (an ActionErrorKind's JSON, or the value returned),
    logs and new receipts."""

    gas_burnt: int = 0
    gas_burnt_for_function_call: int = 0
    gas_used: int = 0
    error: Mapping[str, Any] | str | None = None
    returned: bytes | None = None
    logs: list[str] = field(default_factory=list)
    new_receipts: list[NewReceipt | NewData] = field(default_factory=list)
    profile: dict[str, int] = field(default_factory=dict)  # a contract's gas by cost (contracts.call)
    action_profile: dict[str, int] = field(default_factory=dict)  # the send fees its promises burnt
    return_receipt: int | None = None  # promise_return's receipt, by index among new_receipts

    def merge(self, other: ActionResult) -> None:
        """lib.rs `ActionResult::merge`: gas adds up, the later result wins (a returned receipt's
        index counted past the receipts made before), and a failure drops the receipts made so far."""
        self.gas_burnt += other.gas_burnt
        self.gas_burnt_for_function_call += other.gas_burnt_for_function_call
        self.gas_used += other.gas_used
        self.error = other.error
        self.returned = other.returned
        self.return_receipt = None if other.return_receipt is None else other.return_receipt + len(self.new_receipts)
        self.logs.extend(other.logs)
        for name, gas in other.profile.items():
            self.profile[name] = self.profile.get(name, 0) + gas
        for name, gas in other.action_profile.items():
            self.action_profile[name] = self.action_profile.get(name, 0) + gas
        if other.error is None:
            self.new_receipts.extend(other.new_receipts)
        else:
            self.new_receipts.clear()
            self.return_receipt = None


@dataclass
class Acting:
    """The receipt's receiver account as its actions change it, and who acts on it."""

    account: Account | None
    actor_id: str
    results: tuple[bytes | None, ...] = ()  # the promise results a callback reads (None: Failed)
    # whether the account has a yield waiting on a data id (ext.rs `has_promise_yield_receipt`)
    yield_waiting: Callable[[str], bool] = lambda _data_id: False


@dataclass(frozen=True)
class Env:
    """What every action of a block reads: the overlay, the block, its fees and VM costs."""

    overlay: Overlay
    context: BlockContext
    fees: FeeConfig
    costs: GasCosts
    min_top_level_length: int
    registrar_account_id: str
    action_fees: ActionFees  # what a call's promises pay (contracts.promises)


def is_implicit(config: FeeConfig, account_id: str) -> bool:
    # core/primitives utils.rs `account_is_implicit`
    kind = account_type(account_id)
    return kind == "NearImplicitAccount" or (kind == "EthImplicitAccount" and config.eth_implicit_accounts)


def is_top_level(account_id: str) -> bool:
    return "." not in account_id and account_id != SYSTEM


def is_sub_account_of(account_id: str, parent: str) -> bool:
    # near-account-id `is_sub_account_of`: a direct child only
    prefix = account_id.removesuffix("." + parent)
    return prefix != account_id and bool(prefix) and "." not in prefix


def code_hash_of(code: bytes) -> str:
    return based58.b58encode(hashlib.sha256(code).digest()).decode()


def key_storage(public_key: str, access_key: AccessKey, extra: int) -> int:
    """What an access key adds to storage usage (actions.rs `action_add_key`)."""
    return len(public_key_bytes(public_key)) + access_key_borsh_len(access_key) + extra


def _check_account_existence(env: Env, action: Action, account: Account | None, account_id: str, eligible: bool) -> Any:
    implicit = env.fees.implicit_account_creation and is_implicit(env.fees, account_id)
    if isinstance(action, CreateAccount):
        if account is not None:
            return {"AccountAlreadyExists": {"account_id": account_id}}
        if implicit:
            return {"OnlyImplicitAccountCreationAllowed": {"account_id": account_id}}
        return None
    if isinstance(action, Transfer):
        # ETH-implicit creation deploys nearcore's wallet contract, which this runtime lacks
        creatable = implicit and eligible and account_type(account_id) == "NearImplicitAccount"
        if account is None and not creatable:
            return {"AccountDoesNotExist": {"account_id": account_id}}
        return None
    if account is None:
        return {"AccountDoesNotExist": {"account_id": account_id}}
    return None


def _check_actor_permissions(action: Action, account: Account | None, actor_id: str, account_id: str) -> Any:
    if isinstance(action, DeployContract | Stake | AddKey | DeleteKey | DeleteAccount) and actor_id != account_id:
        return {"ActorNoPermission": {"account_id": account_id, "actor_id": actor_id}}
    if isinstance(action, DeleteAccount) and account is not None and account.locked != 0:
        return {"DeleteAccountStaking": {"account_id": account_id}}
    return None


def apply_action(
    env: Env, receipt: ActionReceipt, acting: Acting, action: Action, index: int, action_hash: str
) -> ActionResult:
    """lib.rs `Runtime::apply_action`."""
    exec_fee = fees.exec_fee(env.fees, action, receipt.receiver_id)
    result = ActionResult(gas_burnt=exec_fee, gas_used=exec_fee)
    account_id = receipt.receiver_id
    eligible = len(receipt.actions) == 1 and not receipt.is_refund
    error = _check_account_existence(env, action, acting.account, account_id, eligible)
    if error is None:
        error = _check_actor_permissions(action, acting.account, acting.actor_id, account_id)
    if error is not None:
        result.error = error
        return result
    if isinstance(action, CreateAccount):
        _create_account(env, receipt, acting, result)
    elif isinstance(action, DeployContract):
        _deploy_contract(env, receipt, acting, action)
    elif isinstance(action, FunctionCall):
        _function_call(env, receipt, acting, action, result, action_hash)
    elif isinstance(action, Transfer):
        _transfer(env, receipt, acting, action.deposit)
    elif isinstance(action, Stake):
        _stake(receipt, acting, action, result)
    elif isinstance(action, AddKey):
        _add_key(env, receipt, acting, action, result)
    elif isinstance(action, DeleteKey):
        _delete_key(env, receipt, acting, action, result)
    elif isinstance(action, DeleteAccount):
        _delete_account(env, receipt, acting, action, result)
    elif isinstance(action, Delegate):
        _delegate(env, receipt, action, result)
    return result


def _create_account(env: Env, receipt: ActionReceipt, acting: Acting, result: ActionResult) -> None:
    # actions.rs `action_create_account`
    account_id, predecessor = receipt.receiver_id, receipt.predecessor_id
    if is_top_level(account_id):
        if len(account_id) < env.min_top_level_length and predecessor != env.registrar_account_id:
            result.error = {
                "CreateAccountOnlyByRegistrar": {
                    "account_id": account_id,
                    "registrar_account_id": env.registrar_account_id,
                    "predecessor_id": predecessor,
                }
            }
            return
    elif not is_sub_account_of(account_id, predecessor):
        result.error = {"CreateAccountNotAllowed": {"account_id": account_id, "predecessor_id": predecessor}}
        return
    acting.actor_id = account_id
    acting.account = Account(amount=0, locked=0, code_hash=NO_CODE_HASH, storage_usage=env.fees.num_bytes_account)


class BalanceOverflow(ArithmeticError):
    """A balance past u128 (only a patched state can hold one so high): nearcore's
    StorageInconsistentState, a failure of the whole chunk rather than of the receipt; the chain
    writer leaves out what fails so, and nothing past u128 is ever written."""


def add_balance(balance: int, amount: int) -> int:
    """actions.rs `action_transfer`'s `checked_add` (and lib.rs `safe_add_balance` for a reward)."""
    total = balance + amount
    if total > fees.MAX_BALANCE:
        raise BalanceOverflow(f"Account balance integer overflow: {balance} + {amount}")
    return total


def _transfer(env: Env, receipt: ActionReceipt, acting: Acting, deposit: int) -> None:
    # actions.rs `action_transfer_or_implicit_account_creation`
    account = acting.account
    if account is not None:
        acting.account = dataclasses.replace(account, amount=add_balance(account.amount, deposit))
        if receipt.is_refund and receipt.signer_id == receipt.receiver_id:
            _refund_allowance(env.overlay, receipt.receiver_id, receipt.signer_public_key, deposit)
        return
    # a NEAR-implicit account: its id is the hex of its ed25519 key, which gets full access
    # (actions.rs `action_implicit_account_creation_transfer`)
    account_id = receipt.receiver_id
    acting.actor_id = account_id
    public_key = "ed25519:" + based58.b58encode(bytes.fromhex(account_id)).decode()
    access_key = AccessKey(nonce=(env.context.height - 1) * ACCESS_KEY_NONCE_RANGE_MULTIPLIER, permission=None)
    env.overlay.set_access_key(account_id, public_key, access_key)
    storage = env.fees.num_bytes_account + key_storage(public_key, access_key, env.fees.num_extra_bytes_record)
    acting.account = Account(amount=deposit, locked=0, code_hash=NO_CODE_HASH, storage_usage=storage)


def _refund_allowance(overlay: Overlay, account_id: str, public_key: str, deposit: int) -> None:
    # actions.rs `try_refund_allowance`: a gas refund restores a function-call key's allowance
    access_key = overlay.access_key(account_id, public_key)
    if access_key is None or access_key.permission is None or access_key.permission.allowance is None:
        return
    allowance = min(access_key.permission.allowance + deposit, fees.MAX_BALANCE)  # saturating, as nearcore's
    if allowance <= access_key.permission.allowance:
        return
    permission = dataclasses.replace(access_key.permission, allowance=allowance)
    overlay.set_access_key(account_id, public_key, dataclasses.replace(access_key, permission=permission))


def _code_len(overlay: Overlay, account: Account) -> int:
    if account.code_hash == NO_CODE_HASH:
        return 0
    code = overlay.code(account.code_hash)
    return 0 if code is None else len(code)


def _deploy_contract(env: Env, receipt: ActionReceipt, acting: Acting, action: DeployContract) -> None:
    # actions.rs `action_deploy_contract` (and `clear_account_contract_storage_usage`)
    account = acting.account
    assert account is not None, "checked by _check_account_existence"
    usage = max(account.storage_usage - _code_len(env.overlay, account), 0) + len(action.code)
    code_hash = code_hash_of(action.code)
    env.overlay.set_code(receipt.receiver_id, code_hash, action.code)
    acting.account = dataclasses.replace(account, code_hash=code_hash, storage_usage=usage)


def _stake(receipt: ActionReceipt, acting: Acting, action: Stake, result: ActionResult) -> None:
    # actions.rs `action_stake`
    account = acting.account
    assert account is not None, "checked by _check_account_existence"
    account_id = receipt.receiver_id
    increment = max(action.stake - account.locked, 0)
    if account.amount < increment:
        result.error = {
            "TriesToStake": {
                "account_id": account_id,
                "stake": str(action.stake),
                "locked": str(account.locked),
                "balance": str(account.amount),
            }
        }
        return
    if account.locked == 0 and action.stake == 0:
        result.error = {"TriesToUnstake": {"account_id": account_id}}
        return
    if action.stake > account.locked:
        acting.account = dataclasses.replace(account, amount=account.amount - increment, locked=action.stake)


def _add_key(env: Env, receipt: ActionReceipt, acting: Acting, action: AddKey, result: ActionResult) -> None:
    # actions.rs `action_add_key`: the new key's nonce starts at (height - 1) * 10^6
    account = acting.account
    assert account is not None, "checked by _check_account_existence"
    account_id = receipt.receiver_id
    if env.overlay.access_key(account_id, action.public_key) is not None:
        result.error = {"AddKeyAlreadyExists": {"account_id": account_id, "public_key": action.public_key}}
        return
    nonce = (env.context.height - 1) * ACCESS_KEY_NONCE_RANGE_MULTIPLIER
    env.overlay.set_access_key(account_id, action.public_key, dataclasses.replace(action.access_key, nonce=nonce))
    added = key_storage(action.public_key, action.access_key, env.fees.num_extra_bytes_record)
    acting.account = dataclasses.replace(account, storage_usage=account.storage_usage + added)


def _delete_key(env: Env, receipt: ActionReceipt, acting: Acting, action: DeleteKey, result: ActionResult) -> None:
    # actions.rs `action_delete_key`
    account = acting.account
    assert account is not None, "checked by _check_account_existence"
    account_id = receipt.receiver_id
    access_key = env.overlay.access_key(account_id, action.public_key)
    if access_key is None:
        result.error = {"DeleteKeyDoesNotExist": {"account_id": account_id, "public_key": action.public_key}}
        return
    removed = key_storage(action.public_key, access_key, env.fees.num_extra_bytes_record)
    env.overlay.set_access_key(account_id, action.public_key, None)
    acting.account = dataclasses.replace(account, storage_usage=max(account.storage_usage - removed, 0))


def _delete_account(
    env: Env, receipt: ActionReceipt, acting: Acting, action: DeleteAccount, result: ActionResult
) -> None:
    # actions.rs `action_delete_account`: the balance goes to the beneficiary by a balance refund
    account = acting.account
    assert account is not None, "checked by _check_account_existence"
    account_id = receipt.receiver_id
    if account.storage_usage - _code_len(env.overlay, account) > MAX_ACCOUNT_DELETION_STORAGE_USAGE:
        result.error = {"DeleteAccountWithLargeState": {"account_id": account_id}}
        return
    if account.amount > 0:
        result.new_receipts.append(balance_refund(action.beneficiary_id, account.amount))
    overlay = env.overlay
    overlay.set_account(account_id, None)
    overlay.remove_code(account_id)
    for public_key, _ in overlay.access_keys(account_id):
        overlay.set_access_key(account_id, public_key, None)
    for key in list(overlay.storage_keys(account_id)):
        overlay.set_data(account_id, key, None)
    acting.actor_id = receipt.predecessor_id
    acting.account = None


def _function_call(
    env: Env, receipt: ActionReceipt, acting: Acting, action: FunctionCall, result: ActionResult, action_hash: str
) -> None:
    # actions.rs `action_function_call` / `execute_function_call`
    account = acting.account
    assert account is not None, "checked by _check_account_existence"
    account_id = receipt.receiver_id
    code = None if account.code_hash == NO_CODE_HASH else env.overlay.code(account.code_hash)
    if code is None:
        # VMRunnerError::ContractCodeNotPresent: a nop outcome, nothing burnt beyond the fee
        result.error = {"FunctionCallError": {"CompilationError": {"CodeDoesNotExist": {"account_id": account_id}}}}
        return
    context = env.context
    view = ViewContext(
        account_id=account_id,
        block_height=context.height,
        block_timestamp=context.timestamp_ns,
        epoch_height=context.epoch_height,
        account_balance=account.amount,
        account_locked_balance=account.locked,
        storage_usage=account.storage_usage,
        random_seed=random_seed(action_hash, context.random_seed),
        epoch_id=context.epoch_id,
    )
    ids = IdMaker(context.block_hash, context.height, context.protocol_version)
    call = CallContext(
        view=view,
        signer_account_id=receipt.signer_id,
        signer_account_pk=public_key_bytes(receipt.signer_public_key),
        predecessor_account_id=receipt.predecessor_id,
        attached_deposit=action.deposit,
        prepaid_gas=action.gas,
        storage_num_extra_bytes_record=env.fees.num_extra_bytes_record,
        promises=PromiseContext(
            env.action_fees,
            acting.results,
            tuple(receiver for _, receiver in receipt.output_data_receivers),
            lambda index: based58.b58decode(ids.data_id(action_hash, index).encode()),
            acting.yield_waiting,
        ),
    )
    storage = ContractStorage(env.overlay, account_id)
    try:
        outcome = run_call(code, account.code_hash, action.method_name, action.args, call, storage, env.costs)
    except CallFailed as failed:
        kind = function_call_error(failed.debug) or {"ExecutionError": failed.debug}
        result.error = {"FunctionCallError": kind}
        result.logs.extend(failed.logs)
        result.gas_burnt += failed.burnt_gas
        result.gas_burnt_for_function_call += failed.burnt_gas
        result.gas_used += failed.burnt_gas
        result.profile = failed.profile
        result.action_profile = failed.action_profile
        return
    except HostFunctionUnavailable as missing:
        message = f"the host function {missing.name} is not implemented by nearrpc's executor"
        result.error = {"FunctionCallError": {"ExecutionError": message}}
        return
    result.logs.extend(outcome.logs)
    result.gas_burnt += outcome.burnt_gas
    result.gas_burnt_for_function_call += outcome.burnt_gas
    result.gas_used += outcome.used_gas
    result.returned = outcome.returned
    result.profile = outcome.profile
    result.action_profile = outcome.action_profile
    # actions.rs `action_function_call`: the receipts the call created, from the receiver
    timeout = int(env.fees.limits.get("yield_timeout_length_in_blocks") or 200)
    made = new_receipts(receipt, outcome.receipts, outcome.resumes, context.height + timeout)
    for new in made:
        if isinstance(new, NewData):
            continue
        # lib.rs `apply_action_receipt`: each new receipt validated (`validate_receipt`, NewReceipt
        # mode); a refusal fails the action, its receipts dropped
        try:
            validate_actions(env.fees.limits, new.actions, context.protocol_version)
        except TransactionRefused as refused:
            result.error = {"NewReceiptValidationError": refused.error}
            return
    result.new_receipts.extend(made)
    result.return_receipt = outcome.return_receipt
    acting.account = dataclasses.replace(account, amount=outcome.balance, storage_usage=outcome.storage_usage)


def _delegate_key_error(env: Env, inner: DelegateAction) -> Any:
    """actions.rs `validate_delegate_action_key`: the sender's key, its nonce, its permission;
    the key's nonce moves to the delegate action's."""
    access_key = env.overlay.access_key(inner.sender_id, inner.public_key)
    if access_key is None:
        error = {"AccessKeyNotFound": {"account_id": inner.sender_id, "public_key": inner.public_key}}
        return {"DelegateActionAccessKeyError": error}
    if inner.nonce <= access_key.nonce:
        return {"DelegateActionInvalidNonce": {"delegate_nonce": inner.nonce, "ak_nonce": access_key.nonce}}
    upper_bound = env.context.height * ACCESS_KEY_NONCE_RANGE_MULTIPLIER
    if inner.nonce >= upper_bound:
        return {"DelegateActionNonceTooLarge": {"delegate_nonce": inner.nonce, "upper_bound": upper_bound}}
    permission = access_key.permission
    if permission is not None:
        only = inner.actions[0] if len(inner.actions) == 1 else None
        if not isinstance(only, FunctionCall):
            return {"DelegateActionAccessKeyError": "RequiresFullAccess"}
        deposit_first = features.enabled(features.FIX_DELEGATE_DEPOSIT_ERROR, env.context.protocol_version)
        if only.deposit > 0 and deposit_first:
            # FixDelegateActionDepositWithFunctionCallError (85): the deposit's error returns at
            # once; before it a receiver or method mismatch found next overwrote it (below)
            return {"DelegateActionAccessKeyError": "DepositWithFunctionCall"}
        if inner.receiver_id != permission.receiver_id:
            mismatch = {"tx_receiver": inner.receiver_id, "ak_receiver": permission.receiver_id}
            return {"DelegateActionAccessKeyError": {"ReceiverMismatch": mismatch}}
        if permission.method_names and only.method_name not in permission.method_names:
            return {"DelegateActionAccessKeyError": {"MethodNameMismatch": {"method_name": only.method_name}}}
        if only.deposit > 0:
            return {"DelegateActionAccessKeyError": "DepositWithFunctionCall"}
    env.overlay.set_access_key(inner.sender_id, inner.public_key, dataclasses.replace(access_key, nonce=inner.nonce))
    return None


def _delegate(env: Env, receipt: ActionReceipt, action: Delegate, result: ActionResult) -> None:
    # actions.rs `apply_delegate_action`: checked, then a receipt from the sender with the inner
    # actions, paid by the relayer's prepaid gas (its send fees burnt here)
    inner = action.delegate_action
    if not verify_delegate(action):
        result.error = "DelegateActionInvalidSignature"
        return
    if env.context.height > inner.max_block_height:
        result.error = "DelegateActionExpired"
        return
    if inner.sender_id != receipt.receiver_id:
        mismatch = {"sender_id": inner.sender_id, "receiver_id": receipt.receiver_id}
        result.error = {"DelegateActionSenderDoesNotMatchTxReceiver": mismatch}
        return
    error = _delegate_key_error(env, inner)
    if error is not None:
        result.error = error
        return
    new_receipt = NewReceipt(
        receipt.receiver_id,
        inner.receiver_id,
        receipt.signer_id,
        receipt.signer_public_key,
        receipt.gas_price,
        tuple(inner.actions),
    )
    config = env.fees
    prepaid_send = fees.total_prepaid_send_fees(config, receipt.actions)
    required = (
        fees.total_prepaid_exec_fees(config, inner.actions, inner.receiver_id)
        + fees.total_prepaid_gas(inner.actions)
        + config.new_action_receipt.execution
    )
    result.gas_used += required + prepaid_send
    result.gas_burnt += prepaid_send
    result.new_receipts.append(new_receipt)
