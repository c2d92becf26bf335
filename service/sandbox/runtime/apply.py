"""A block applied as nearcore's runtime applies a chunk (runtime/runtime/src/lib.rs): its
transactions converted to action receipts, then the receipts run in nearcore's order.

- `process_transaction`: a transaction, verified and charged (its signer pays the send fees,
  burnt now, and prepays the execution fees and the attached gas and deposit), becomes an action
  receipt whose id `create_receipt_id_from_transaction` gives (ids.py); the conversion's outcome
  burns the send fees and answers `SuccessReceiptId`;
- local receipts (signer == receiver) run in the same block, first; then the receipts carried
  from earlier blocks, in their order. Whatever a receipt makes (including its refunds) runs in
  the next block (`outgoing`), as nearcore forwards it;
- `process_receipt`: an action receipt waiting for data (a callback) runs once all its data
  receipts arrived, else waits (postponed) until the last one arrives; the data that arrived
  is its promise results, in its input_data_ids' order. What waits is carried to the next block
  (`BlockResult.waiting`), as nearcore keeps it in the state;
- after the actions and refunds, a receipt with output data receivers sends each a data receipt
  with its value (none when it failed), or, when it returned a promise (`promise_return`), hands
  them to that receipt; new receipts take their ids in the order made (actions' receipts,
  refunds, data receipts), and the outcome lists the action receipts only;
- yields: a PromiseYield receipt is kept when it arrives (no outcome yet) and runs when its
  PromiseResume arrives (a resume for none is dropped); at the end of the block, each yield whose
  timeout height is reached gets a resume without data (Failed), whose id derives from the data id
  (`resolve_promise_yield_timeouts`: `create_receipt_id_from_receipt_id(data_id, n)`);
- `apply_action_receipt`: the execution fee of a new receipt, then each action (actions.py);
  the first failure stops them and rolls the receipt's changes back (its charges stay); on
  success the receiver's storage must be staked (`check_storage_stake`: LackBalanceForState).
  Its gas was bought at the receipt's gas price (at least min_gas_purchase_price); from protocol
  85 (NEP-642, AccountCostIncrease) it burns at min(that price, the block's), and
  `refund_unspent_gas_and_deposits` returns to the signer the unused gas at the purchase price
  less NEP-536's penalty, plus the burnt gas's price surplus less account_creation_charge (what
  create_account's execution fee burnt counts towards it) when the receipt created its receiver;
  a failed receipt's deposits go to its predecessor (balance refund first, then the gas refund).
  Before 85 the gas burns at the block's price and the surplus is burnt, not refunded. A refund
  receipt burns nothing (its outcome still shows its gas) and a failed one loses its deposit; a
  function call's receiver gets `burnt_gas_reward` of its contract's gas at the burn price (0
  from 87). A receipt of a lone DeleteAccount a receipt makes runs at once (instant receipt);
- outcomes as ExecutionOutcomeWithIdView JSON (a conversion's metadata version 1, a receipt's
  version 3, or 4 from protocol 85 with the receiver's contract before each action; gas
  profiles hold the contract's costs). Protocol versions: features.py.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nearrpc.contracts.gas import GasCosts
from nearrpc.contracts.promises import ActionFees
from nearrpc.sandbox.runtime import features, fees
from nearrpc.sandbox.runtime.actions import (
    Acting,
    ActionResult,
    Env,
    add_balance,
    apply_action,
    balance_refund,
    gas_refund,
)
from nearrpc.sandbox.runtime.decode import TransactionDecodeError, decode_signed_transaction
from nearrpc.sandbox.runtime.fees import FeeConfig
from nearrpc.sandbox.runtime.ids import IdMaker
from nearrpc.sandbox.runtime.model import (
    NO_CODE_HASH,
    Account,
    BlockContext,
    BlockResult,
    DeleteAccount,
    Receipt,
    ReceiptApplied,
    SignedTransaction,
    StateView,
    TransactionApplied,
    TransactionRefused,
)
from nearrpc.sandbox.runtime.receipts import ActionReceipt, DataReceipt, NewData
from nearrpc.sandbox.runtime.state import Overlay
from nearrpc.sandbox.runtime.verifier import Charged, check_transaction, lacking_for_storage
from nearrpc.sandbox.runtime.views import signed_transaction_view


def _outcome(
    context: BlockContext,
    outcome_id: str,
    executor_id: str,
    gas_burnt: int,
    tokens_burnt: int,
    receipt_ids: list[str],
    status: Mapping[str, Any],
    logs: list[str],
    metadata: Mapping[str, Any],
) -> dict[str, Any]:
    return {
        "proof": [],
        "block_hash": context.block_hash,
        "id": outcome_id,
        "outcome": {
            "logs": logs,
            "receipt_ids": receipt_ids,
            "gas_burnt": gas_burnt,
            "tokens_burnt": str(tokens_burnt),
            "executor_id": executor_id,
            "status": status,
            "metadata": metadata,
        },
    }


@dataclass
class _Waiting:
    """lib.rs `process_receipt`'s records in the state: data that arrived (ReceivedData), the
    receipts waiting for data (PostponedReceipt), which receipt waits for which data id
    (PostponedReceiptId) and how many data each still waits for (PendingDataCount)."""

    received: dict[tuple[str, str], DataReceipt] = field(default_factory=dict)
    postponed: dict[str, ActionReceipt] = field(default_factory=dict)
    awaiting: dict[tuple[str, str], str] = field(default_factory=dict)
    pending: dict[str, int] = field(default_factory=dict)
    produced_at: dict[str, int] = field(default_factory=dict)  # by receipt id, of what waits
    # PromiseYieldReceipt: the yields kept, by (account, data id), and their timeouts (expires_at)
    yields: dict[tuple[str, str], ActionReceipt] = field(default_factory=dict)

    def carried(self) -> list[Receipt]:
        kept = [data.carried(self.produced_at.get(data.receipt_id, 0)) for data in self.received.values()]
        kept += [receipt.carried(self.produced_at.get(key, 0)) for key, receipt in self.postponed.items()]
        kept += [receipt.carried(self.produced_at.get(receipt.receipt_id, 0)) for receipt in self.yields.values()]
        return kept


@dataclass
class _Block:
    """One block's application under way."""

    env: Env
    ids: IdMaker
    transactions: list[TransactionApplied]
    receipts: list[ReceiptApplied]
    outgoing: list[Receipt]
    waiting: _Waiting = field(default_factory=_Waiting)
    gas_burnt: int = 0
    tokens_burnt: int = 0  # what leaves the total supply


def gas_profile(profile: Mapping[str, int], actions: Mapping[str, int] | None = None) -> list[dict[str, str]]:
    """ExecutionMetadataView V3's gas profile (views.rs `CostGasUsed`): a contract's host costs
    and instructions, category WASM_HOST_COST, by name (ExtCosts in capitals), and the send fees
    its promises burnt, category ACTION_COST (ActionCosts in capitals); sorted by category then
    cost, as nearcore sorts them."""
    entries = [
        {"cost_category": "WASM_HOST_COST", "cost": name.upper(), "gas_used": str(gas)} for name, gas in profile.items()
    ]
    entries += [
        {"cost_category": "ACTION_COST", "cost": name.upper(), "gas_used": str(gas)}
        for name, gas in (actions or {}).items()
        if gas > 0
    ]
    return sorted(entries, key=lambda entry: (entry["cost_category"], entry["cost"]))


@dataclass
class _Charges:
    """lib.rs `GasRefundResult`: what a receipt's refund computation adds to its tokens burnt."""

    penalty: int = 0  # NEP-536's refund penalty, in tokens
    deficit: int = 0  # the burnt gas's price above its purchase price (never under NEP-642)
    surplus: int = 0  # the burnt gas's price below its purchase price
    account_creation: int = 0  # NEP-642's account_creation_charge top-up

    def burnt(self, protocol_version: int) -> int:
        """What adds to `burnt gas * burn price` (lib.rs `apply_action_receipt`): the penalty and
        the account charge; the surplus too before NEP-642 (refunded from it on)."""
        kept = 0 if features.enabled(features.ACCOUNT_COST_INCREASE, protocol_version) else self.surplus
        return kept - self.deficit + self.penalty + self.account_creation


def _is_instant(receipt: ActionReceipt) -> bool:
    """receipt.rs `Receipt::is_instant_receipt` (InstantDeleteAccount, protocol 83): a receipt of a
    single DeleteAccount waiting for no data, or a PromiseYield (kept at once), is processed right
    after the receipt that made it, in the same chunk, instead of in the next block."""
    if receipt.is_promise_yield:
        return True
    only_delete = len(receipt.actions) == 1 and isinstance(receipt.actions[0], DeleteAccount)
    return only_delete and not receipt.input_data_ids and not receipt.is_refund


def _burn_price(purchase_price: int, context: BlockContext) -> int:
    # lib.rs `apply_action_receipt`: NEP-642 never burns above the price the gas was bought at
    if features.enabled(features.ACCOUNT_COST_INCREASE, context.protocol_version):
        return min(purchase_price, context.gas_price)
    return context.gas_price


def _contract_view(account: Account | None) -> dict[str, str] | None:
    """views.rs AccountContractView of the receiver's contract (a local one: the sandbox has no
    global contracts); None without one."""
    if account is None or account.code_hash == NO_CODE_HASH:
        return None
    return {"local": account.code_hash}


def _receipt_metadata(
    protocol_version: int, result: ActionResult, contracts: list[dict[str, str] | None]
) -> dict[str, Any]:
    """ExecutionMetadataView of a receipt's outcome: V3 (its gas profile), or V4 from protocol 85
    (ExecutionMetadataV4), which adds the receiver's contract before each action."""
    profile = gas_profile(result.profile, result.action_profile)
    if features.enabled(features.EXECUTION_METADATA_V4, protocol_version):
        return {"version": 4, "gas_profile": profile, "contracts": contracts}
    return {"version": 3, "gas_profile": profile}


def make_env(overlay: Overlay, context: BlockContext) -> Env:
    runtime_config = context.protocol_config["runtime_config"]
    creation = runtime_config["account_creation_config"]
    return Env(
        overlay=overlay,
        context=context,
        fees=FeeConfig.from_runtime_config(runtime_config),
        costs=GasCosts.from_protocol_config(context.protocol_config),
        min_top_level_length=int(creation["min_allowed_top_level_account_length"]),
        registrar_account_id=str(creation["registrar_account_id"]),
        action_fees=ActionFees.from_runtime_config(runtime_config),
    )


def _charge(env: Env, signed: SignedTransaction, block_height: int | None) -> Charged:
    """verifier.rs `validate_transaction` and `verify_and_charge_tx_ephemeral` against the state
    the block has reached; raises TransactionRefused."""
    context = env.context
    return check_transaction(
        env.overlay,
        env.fees,
        signed,
        gas_price=context.gas_price,
        protocol_version=context.protocol_version,
        block_height=block_height,
    )


class SandboxRuntime:
    """nearcore's runtime over a `StateView` (model.Runtime). Holds nothing between calls: the
    chain writer hands each block its parent's state and keeps what comes back."""

    def check_transaction(self, state: StateView, context: BlockContext, signed: bytes) -> TransactionApplied:
        # bytes that are no signed transaction raise decode.TransactionDecodeError: nearcore answers
        # them as a request's parse error, not as an InvalidTxError
        return self.check_decoded(state, context, decode_signed_transaction(signed))

    def check_decoded(self, state: StateView, context: BlockContext, signed: SignedTransaction) -> TransactionApplied:
        """A decoded transaction's check: raises TransactionRefused as nearcore would refuse it."""
        env = make_env(Overlay(state), context)
        # at arrival nearcore's RPC leaves the nonce's upper bound to the block (block_height None)
        charged = _charge(env, signed, None)
        gas_burnt = charged.cost.gas_burnt
        tx = signed.transaction
        ids = IdMaker(context.block_hash, context.height, context.protocol_version)
        receipt_id = ids.receipt_of_transaction(signed.hash)
        outcome = _outcome(
            context,
            signed.hash,
            tx.signer_id,
            gas_burnt,
            gas_burnt * context.gas_price,
            [receipt_id],
            {"SuccessReceiptId": receipt_id},
            [],
            {"version": 1},
        )
        return TransactionApplied(
            signed.hash, tx.signer_id, context.shard_of(tx.signer_id), signed_transaction_view(signed), outcome
        )

    def apply_block(
        self,
        state: StateView,
        context: BlockContext,
        transactions: Sequence[bytes],
        receipts: Sequence[Receipt],
        waiting: Sequence[Receipt] = (),
    ) -> BlockResult:
        decoded = []
        for raw in transactions:
            try:
                decoded.append(decode_signed_transaction(raw))
            except TransactionDecodeError:
                continue  # a chunk producer drops what it cannot decode
        return self.apply_decoded(state, context, decoded, receipts, waiting)

    def apply_decoded(
        self,
        state: StateView,
        context: BlockContext,
        transactions: Sequence[SignedTransaction],
        receipts: Sequence[Receipt],
        waiting: Sequence[Receipt] = (),
    ) -> BlockResult:
        overlay = Overlay(state)
        block = _Block(
            env=make_env(overlay, context),
            ids=IdMaker(context.block_hash, context.height, context.protocol_version),
            transactions=[],
            receipts=[],
            outgoing=[],
        )
        for kept in waiting:
            self._keep(block, kept)
        local: list[ActionReceipt] = []
        for signed in transactions:
            receipt = self._convert(block, signed)
            if receipt is None:
                continue
            if receipt.receiver_id == receipt.signer_id:
                local.append(receipt)
            else:
                block.outgoing.append(receipt.carried(context.height))
        # lib.rs `process_receipts`: local receipts first, then those that arrived
        for receipt in local:
            self._apply_receipt(block, receipt)
        for carried in receipts:
            data = DataReceipt.of(carried)
            if data is None:
                self._process_action(block, ActionReceipt.of(carried), carried.produced_at)
            elif data.is_promise_resume:
                self._resume(block, data)
            else:
                self._receive_data(block, data, carried.produced_at)
        self._time_out_yields(block)
        return BlockResult(
            transactions=block.transactions,
            receipts=block.receipts,
            outgoing=block.outgoing,
            changes=overlay.block,
            gas_burnt=block.gas_burnt,
            tokens_burnt=block.tokens_burnt,
            commits=overlay.commits,
            waiting=block.waiting.carried(),
        )

    # --- receipts waiting for data (lib.rs `process_receipt`) ------------------------------------------
    def _keep(self, block: _Block, kept: Receipt) -> None:
        """What the previous block left waiting, back in place: data first, then the receipts
        (each waiting for the data not there yet)."""
        data = DataReceipt.of(kept)
        waiting = block.waiting
        if data is not None:  # (_Waiting.carried lists the data before the receipts)
            waiting.received[(data.receiver_id, data.data_id)] = data
            waiting.produced_at[data.receipt_id] = kept.produced_at
            return
        receipt = ActionReceipt.of(kept)
        if receipt.is_promise_yield:
            self._keep_yield(block, receipt, kept.produced_at)
        else:
            self._postpone(block, receipt, kept.produced_at)

    @staticmethod
    def _keep_yield(block: _Block, receipt: ActionReceipt, produced_at: int) -> None:
        waiting = block.waiting
        waiting.yields[(receipt.receiver_id, receipt.input_data_ids[0])] = receipt
        waiting.produced_at[receipt.receipt_id] = produced_at

    def _resume(self, block: _Block, data: DataReceipt) -> None:
        """lib.rs `process_receipt`, PromiseResume: the yield runs with the data; a second resume
        (or one for no yield) is dropped."""
        waiting = block.waiting
        key = (data.receiver_id, data.data_id)
        receipt = waiting.yields.pop(key, None)
        if receipt is None:
            return
        waiting.produced_at.pop(receipt.receipt_id, None)
        waiting.received[key] = data
        self._apply_receipt(block, receipt)

    @staticmethod
    def _time_out_yields(block: _Block) -> None:
        """lib.rs `resolve_promise_yield_timeouts`: each yield whose timeout is reached gets a
        resume without data, sent to the next block; its timeout is then spent."""
        height = block.env.context.height
        made = 0
        for key, receipt in list(block.waiting.yields.items()):
            if receipt.expires_at is None or receipt.expires_at > height:
                continue
            account_id, data_id = key
            resume_id = block.ids.receipt_of_receipt(data_id, made)
            made += 1
            resume = DataReceipt(resume_id, account_id, account_id, data_id, None, is_promise_resume=True)
            block.outgoing.append(resume.carried(height))
            block.waiting.yields[key] = dataclasses.replace(receipt, expires_at=None)

    def _postpone(self, block: _Block, receipt: ActionReceipt, produced_at: int) -> bool:
        """Postpone a receipt whose data has not all arrived; False when it is all there."""
        waiting = block.waiting
        account_id = receipt.receiver_id
        missing = [data_id for data_id in receipt.input_data_ids if (account_id, data_id) not in waiting.received]
        if not missing:
            return False
        for data_id in missing:
            waiting.awaiting[(account_id, data_id)] = receipt.receipt_id
        waiting.pending[receipt.receipt_id] = len(missing)
        waiting.postponed[receipt.receipt_id] = receipt
        waiting.produced_at[receipt.receipt_id] = produced_at
        return True

    def _process_action(self, block: _Block, receipt: ActionReceipt, produced_at: int) -> None:
        if receipt.is_promise_yield:
            self._keep_yield(block, receipt, produced_at)
        elif not self._postpone(block, receipt, produced_at):
            self._apply_receipt(block, receipt)

    def _receive_data(self, block: _Block, data: DataReceipt, produced_at: int) -> None:
        waiting = block.waiting
        key = (data.receiver_id, data.data_id)
        waiting.received[key] = data
        waiting.produced_at[data.receipt_id] = produced_at
        receipt_id = waiting.awaiting.pop(key, None)
        if receipt_id is None:
            return  # the receipt waiting for it has not arrived yet
        waiting.pending[receipt_id] -= 1
        if waiting.pending[receipt_id] == 0:
            del waiting.pending[receipt_id]
            waiting.produced_at.pop(receipt_id, None)
            self._apply_receipt(block, waiting.postponed.pop(receipt_id))

    def _take_results(self, block: _Block, receipt: ActionReceipt) -> tuple[bytes | None, ...]:
        """lib.rs `apply_action_receipt`: the input data, in order, taken out of the state."""
        waiting = block.waiting
        taken = [waiting.received.pop((receipt.receiver_id, data_id)) for data_id in receipt.input_data_ids]
        for data in taken:
            waiting.produced_at.pop(data.receipt_id, None)
        return tuple(data.data for data in taken)

    # --- a transaction becomes a receipt ------------------------------------------------------------
    def _convert(self, block: _Block, signed: SignedTransaction) -> ActionReceipt | None:
        env = block.env
        overlay = env.overlay
        try:
            charged = _charge(env, signed, env.context.height)
        except TransactionRefused:
            return None  # nearcore skips a transaction that became invalid (lib.rs `process_transactions`)
        gas_burnt, receipt_gas_price = charged.cost.gas_burnt, charged.cost.receipt_gas_price
        tx = signed.transaction
        overlay.set_account(tx.signer_id, charged.signer)
        overlay.set_access_key(tx.signer_id, tx.public_key, charged.access_key)
        # lib.rs `process_transaction`: the signer's charge and nonce, under the transaction
        overlay.commit({"type": "transaction_processing", "tx_hash": signed.hash})
        context = env.context
        receipt_id = block.ids.receipt_of_transaction(signed.hash)
        tokens = gas_burnt * context.gas_price
        outcome = _outcome(
            context,
            signed.hash,
            tx.signer_id,
            gas_burnt,
            tokens,
            [receipt_id],
            {"SuccessReceiptId": receipt_id},
            [],
            {"version": 1},
        )
        block.transactions.append(
            TransactionApplied(
                signed.hash, tx.signer_id, context.shard_of(tx.signer_id), signed_transaction_view(signed), outcome
            )
        )
        block.gas_burnt += gas_burnt
        block.tokens_burnt += tokens
        return ActionReceipt(
            receipt_id, tx.signer_id, tx.receiver_id, tx.signer_id, tx.public_key, receipt_gas_price, tx.actions
        )

    # --- a receipt runs --------------------------------------------------------------------------------
    def _apply_receipt(self, block: _Block, receipt: ActionReceipt) -> None:
        # lib.rs `apply_action_receipt`
        env = block.env
        overlay = env.overlay
        context = env.context
        config = env.fees
        results = self._take_results(block, receipt)
        yields = block.waiting.yields
        acting = Acting(
            account=overlay.account(receipt.receiver_id),
            actor_id=receipt.predecessor_id,
            results=results,
            yield_waiting=lambda data_id: (receipt.receiver_id, data_id) in yields,
        )
        existed = acting.account is not None
        receipt_fee = config.new_action_receipt.execution
        result = ActionResult(gas_burnt=receipt_fee, gas_used=receipt_fee)
        error_index: int | None = None
        contracts: list[dict[str, str] | None] = []
        for index, action in enumerate(receipt.actions):
            contracts.append(_contract_view(acting.account))  # lib.rs `apply_action`: before its checks
            action_hash = block.ids.action_hash(receipt.receipt_id, index)
            result.merge(apply_action(env, receipt, acting, action, index, action_hash))
            if result.error is not None:
                error_index = index
                break
        contracts.extend([None] * (len(receipt.actions) - len(contracts)))  # slots never run
        if result.error is None and acting.account is not None:
            lacking = self._storage_lack(env, receipt.receiver_id, acting)
            if lacking is None:
                overlay.set_account(receipt.receiver_id, acting.account)
            else:
                result.merge(ActionResult(error={"LackBalanceForState": lacking}))
        burn_price = _burn_price(receipt.gas_price, context)
        charges = _Charges()
        lost = 0
        if receipt.is_refund:
            # a refund that fails (its receiver is gone) burns its deposit (lib.rs: other_burnt_amount)
            lost = fees.total_deposit(receipt.actions) if result.error is not None else 0
        else:
            created = result.error is None and not existed and acting.account is not None
            charges = self._refunds(env, receipt, result, burn_price, created)
        if result.error is None:
            # lib.rs `apply_action_receipt`: a receipt's writes, kept only when it succeeded
            overlay.commit({"type": "receipt_processing", "receipt_hash": receipt.receipt_id})
        else:
            overlay.rollback()
        # a refund receipt burns nothing, though its outcome shows the gas its Transfer took
        burnt_gas = 0 if receipt.is_refund else result.gas_burnt
        tokens_burnt = burnt_gas * burn_price + charges.burnt(context.protocol_version)
        reward = self._reward(env, receipt.receiver_id, receipt.receipt_id, result, burn_price)
        block.gas_burnt += result.gas_burnt
        block.tokens_burnt += tokens_burnt - reward + lost
        self._send_data(receipt, result)
        receipt_ids = []
        instant: list[ActionReceipt] = []
        for index, new in enumerate(result.new_receipts):
            made = new.with_id(block.ids.receipt_of_receipt(receipt.receipt_id, index))
            if isinstance(made, DataReceipt):
                block.outgoing.append(made.carried(context.height))  # no outcome of its own
                continue
            receipt_ids.append(made.receipt_id)
            if _is_instant(made):
                instant.append(made)
            else:
                block.outgoing.append(made.carried(context.height))
        if result.error is not None:
            status: Mapping[str, Any] = {"Failure": {"ActionError": {"index": error_index, "kind": result.error}}}
        elif result.return_receipt is not None:
            status = {"SuccessReceiptId": block.ids.receipt_of_receipt(receipt.receipt_id, result.return_receipt)}
        else:
            status = {"SuccessValue": base64.b64encode(result.returned or b"").decode()}
        outcome = _outcome(
            context,
            receipt.receipt_id,
            receipt.receiver_id,
            result.gas_burnt,
            tokens_burnt,
            receipt_ids,
            status,
            result.logs,
            _receipt_metadata(context.protocol_version, result, contracts),
        )
        shard = context.shard_of(receipt.receiver_id)
        block.receipts.append(ReceiptApplied(receipt.receipt_id, shard, receipt.view(), outcome))
        for made in instant:
            self._process_action(block, made, context.height)

    @staticmethod
    def _send_data(receipt: ActionReceipt, result: ActionResult) -> None:
        """lib.rs `apply_action_receipt`, outgoing data: a returned promise takes over the
        receipt's output data receivers; otherwise each gets the value (empty when the receipt
        returned nothing, None when it failed)."""
        if not receipt.output_data_receivers:
            return
        if result.error is None and result.return_receipt is not None:
            target = result.new_receipts[result.return_receipt]
            assert not isinstance(target, NewData), "a promise is an action receipt"
            receivers = target.output_data_receivers + receipt.output_data_receivers
            result.new_receipts[result.return_receipt] = dataclasses.replace(target, output_data_receivers=receivers)
            return
        data = None if result.error is not None else (result.returned or b"")
        result.new_receipts.extend(
            NewData(receipt.receiver_id, receiver_id, data_id, data)
            for data_id, receiver_id in receipt.output_data_receivers
        )

    @staticmethod
    def _storage_lack(env: Env, account_id: str, acting: Acting) -> dict[str, str] | None:
        # verifier.rs `check_storage_stake`, after a receipt's actions
        account = acting.account
        assert account is not None
        lacking = lacking_for_storage(account, account.amount, env.fees)
        return {"account_id": account_id, "amount": str(lacking)} if lacking else None

    @staticmethod
    def _refunds(env: Env, receipt: ActionReceipt, result: ActionResult, burn_price: int, created: bool) -> _Charges:
        """lib.rs `refund_unspent_gas_and_deposits` (NEP-536 from protocol 78, NEP-642 from 85): a
        failed receipt's deposits go back to its predecessor; the unused gas at the price it was
        bought at, less the refund penalty, and (NEP-642) the price surplus of the burnt gas, less
        account_creation_charge when the receipt created its receiver, go back to the signer."""
        config = env.fees
        protocol_version = env.context.protocol_version
        cost_increase = features.enabled(features.ACCOUNT_COST_INCREASE, protocol_version)
        purchase_price = receipt.gas_price
        prepaid_gas = fees.total_prepaid_gas(receipt.actions) + fees.total_prepaid_send_fees(config, receipt.actions)
        prepaid_exec = (
            fees.total_prepaid_exec_fees(config, receipt.actions, receipt.receiver_id)
            + config.new_action_receipt.execution
        )
        spent = result.gas_burnt if result.error is not None else result.gas_used
        gross_refund = prepaid_gas + prepaid_exec - spent
        penalty_price = burn_price if cost_increase else purchase_price
        charges = _Charges(penalty=config.gas_penalty_for_gas_refund(gross_refund) * penalty_price)
        unused_back = max(gross_refund * purchase_price - charges.penalty, 0)
        if burn_price > purchase_price:
            charges.deficit = (burn_price - purchase_price) * result.gas_burnt
        else:
            charges.surplus = (purchase_price - burn_price) * result.gas_burnt
        surplus_back = charges.surplus if cost_increase else 0
        if created and cost_increase:
            # NEP-642: the account costs at least account_creation_charge; what its create_account
            # execution fee burnt counts towards it, the rest comes out of the surplus refund
            already = burn_price * config.create_account.execution
            charges.account_creation = min(max(config.account_creation_charge - already, 0), surplus_back)
            surplus_back -= charges.account_creation
        if result.error is not None:
            deposit = fees.total_deposit(receipt.actions)
            if deposit > 0:
                result.new_receipts.append(balance_refund(receipt.predecessor_id, deposit))
        gas_back = unused_back + surplus_back
        if gas_back > 0:
            result.new_receipts.append(gas_refund(receipt.signer_id, gas_back, receipt.signer_public_key))
        return charges

    @staticmethod
    def _reward(env: Env, account_id: str, receipt_id: str, result: ActionResult, burn_price: int) -> int:
        """lib.rs `apply_action_receipt`: the receiver earns burnt_gas_reward of the gas its contract
        burnt, if it still exists, at the burn price (NEP-642; before it the receipt's price, which
        the burn price then was). Zero from protocol 87 (RemoveGasRewards: burnt_gas_reward 0/1)."""
        numerator, denominator = env.fees.burnt_gas_reward
        reward = result.gas_burnt_for_function_call * numerator // denominator * burn_price
        if reward <= 0:
            return 0
        account = env.overlay.account(account_id)
        if account is None:
            return 0
        env.overlay.set_account(account_id, dataclasses.replace(account, amount=add_balance(account.amount, reward)))
        env.overlay.commit({"type": "action_receipt_gas_reward", "receipt_hash": receipt_id})
        return reward
