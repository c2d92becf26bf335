"""Builds the sample chain: a small NEAR localnet, the same bytes on every run.

The generator walks the heights from genesis to the head and, for each produced block,
applies that height's transactions to the account states, builds one chunk header per
shard (re-using the previous header of a shard whose chunk was not produced), computes the
gas price, total supply, finality pointers and epoch, and emits the `block` result.

Rules it follows (nearcore's, simplified where noted):
- Finality (doomslug): a block whose parent sits at the height just below it makes the
  parent doomslug-final (`last_ds_final_block` = parent) and the parent's doomslug-final
  block BFT-final (`last_final_block` = parent's `last_ds_final_block`); after a skipped
  height both pointers are carried over from the parent. As in nearcore the genesis header
  has the zero hash in both, so the first block's `last_final_block` is the zero hash.
- Epochs: the genesis block opens the first epoch, whose id is the zero hash. A block ends
  its epoch when the next height reaches first_height + epoch_length and its BFT-final
  block is at most three heights short of that, so skips can lengthen an epoch. Epoch ids:
  the second epoch's id is the genesis hash and epoch T+2's id is the hash of the last block
  of epoch T; a block's `next_epoch_id` is the id of the following epoch. The genesis header
  has the zero hash in both `epoch_id` and `next_epoch_id`, as nearcore builds it.
- Protocol version: every header votes `LATEST_PROTOCOL_VERSION`; a version voted for by
  the whole stake during epoch T takes effect in epoch T + 2.
- Gas price: from the new chunks' gas used and limit, scaled by the adjustment rate and
  clamped to [min, max]; a block without new chunks keeps its parent's price.
- Supply: fees are burnt (total supply and the payer's balance drop by `balance_burnt`),
  and the first block of each epoch after the first mints the previous epoch's reward
  (validators' stake and the treasury grow, and the total supply with them). So at every
  block the total supply equals the sum of all accounts' amount + locked.
- Transactions are real: each is a borsh `Transaction` (V0) on the parent block's hash, known
  by its SHA-256 and signed by the signer's ed25519 key (execution.py), included in the chunk
  of its signer's shard and converted there to an action receipt. Sample simplification: the
  receipt, and the refund or balance receipts its execution adds, are executed in the same
  block and their gas is counted in that same chunk (no receipts in flight between shards, no
  delayed receipts), so a chunk's gas_used and balance_burnt are the sums of the outcomes of
  the transactions it includes, and a block's effects all land at its height.
- Chunk headers: gas_used, balance_burnt, tx_root (nearcore's merkle tree over the borsh
  SignedTransactions) and outcome_root (the same tree, over stand-in leaves of each outcome,
  whose `proof` is its path in it) are computed; prev_state_root, encoded_merkle_root,
  encoded_length and outgoing_receipts_root are stand-ins. Block and chunk hashes are SHA-256
  of the header's canonical JSON (crypto.py), not nearcore's borsh inner parts; the block's
  roots over its chunks are stand-ins.
- Contract state: the counter's calls and the token's transfers write the storage keys their
  contracts would (layouts in wasm.py), one row per key changed at a height; an account's
  storage_usage counts its code and each data record's key, value and 40 extra bytes, as
  nearcore's does. The generator applies the calls itself; nothing executes the contracts here.
"""

from __future__ import annotations

import base64
import calendar
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from nearrpc.nearcore.views import ZERO_HASH
from nearrpc.sample import configs, crypto, execution, merkle, scenario, validators, wasm
from nearrpc.sample.crypto import EMPTY_SIGNATURE
from nearrpc.sample.keys import AccessKeyRow, KeyLedger
from nearrpc.sample.scenario import NEAR
from nearrpc.store import (
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    block_from_view,
)


@dataclass(frozen=True, slots=True)
class AccountStateRow:
    """One `put_account_state` call: the account's view after the block at `height`,
    None when the account was deleted in that block."""

    account_id: str
    height: int
    view_json: bytes | None


@dataclass(frozen=True, slots=True)
class ContractDataRow:
    """One `put_contract_data` call: the value of a storage key of the account's contract after
    the block at `height`, None when the key was removed in that block."""

    account_id: str
    key: bytes
    height: int
    value: bytes | None


@dataclass(frozen=True, slots=True)
class SampleChain:
    """Everything the sample store holds, as the bytes that get stored."""

    genesis_config_json: bytes
    client_config_json: bytes
    blocks: tuple[StoredBlock, ...]  # ascending height, all canonical
    epochs: tuple[StoredEpoch, ...]  # in chain order
    account_states: tuple[AccountStateRow, ...]  # ascending height, then account id
    access_keys: tuple[AccessKeyRow, ...]  # ascending height, then account id and key
    contract_codes: tuple[tuple[str, bytes], ...]  # (code hash, code) of the deployed contracts
    contract_data: tuple[ContractDataRow, ...]  # ascending height, then account id and key
    chunks: tuple[StoredChunk, ...]  # every new chunk (genesis included), ascending height, then shard
    transactions: tuple[StoredTransaction, ...]  # ascending height, then shard, then order in the chunk
    receipts: tuple[StoredReceipt, ...]  # in the order their transactions' outcomes list them
    validators: tuple[StoredValidators, ...]  # one per epoch, in chain order


@dataclass(slots=True)
class _Account:
    amount: int
    locked: int = 0
    code_hash: str = ZERO_HASH
    storage_usage: int = scenario.BASE_STORAGE
    global_contract_hash: str | None = None
    global_contract_account_id: str | None = None

    def view(self) -> dict[str, Any]:
        # AccountView order; the global contract members only when set.
        view: dict[str, Any] = {
            "amount": str(self.amount),
            "locked": str(self.locked),
            "code_hash": self.code_hash,
            "storage_usage": self.storage_usage,
            "storage_paid_at": 0,
        }
        if self.global_contract_hash is not None:
            view["global_contract_hash"] = self.global_contract_hash
        if self.global_contract_account_id is not None:
            view["global_contract_account_id"] = self.global_contract_account_id
        return view


@dataclass(slots=True)
class _ShardWork:
    """What one shard's chunk did at one height."""

    executed: list[execution.Executed] = field(default_factory=list)
    proposals: list[dict[str, str]] = field(default_factory=list)

    @property
    def gas_used(self) -> int:
        return sum(e.gas_burnt for e in self.executed)

    @property
    def balance_burnt(self) -> int:
        return sum(e.tokens_burnt for e in self.executed)


@dataclass(slots=True)
class _Epoch:
    index: int
    epoch_id: str
    first_height: int
    protocol_version: int
    # Hash of the block producers (with stakes) announced for the next epoch, fixed when
    # this epoch opens.
    next_bp_hash: str
    votes: set[int] = field(default_factory=set)
    last_hash: str | None = None


def _genesis_time_ns() -> int:
    text = scenario.GENESIS_TIME
    seconds_part, _, fraction = text.rstrip("Z").partition(".")
    seconds = calendar.timegm(
        (
            int(seconds_part[0:4]),
            int(seconds_part[5:7]),
            int(seconds_part[8:10]),
            int(seconds_part[11:13]),
            int(seconds_part[14:16]),
            int(seconds_part[17:19]),
            0,
            0,
            0,
        )
    )
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0"))


def _genesis_accounts() -> dict[str, _Account]:
    accounts: dict[str, _Account] = {
        scenario.TOP_LEVEL: _Account(amount=2_500 * NEAR + 4_521),
        scenario.REGISTRAR: _Account(amount=10_000 * NEAR),
        scenario.TREASURY: _Account(amount=100_000 * NEAR),
    }
    for validator, stake in zip(scenario.VALIDATORS, scenario.VALIDATOR_STAKES, strict=True):
        liquid = 10_000 * NEAR + crypto.det_int("validator-amount", validator) % NEAR
        accounts[validator] = _Account(amount=liquid, locked=stake)
    for account_id in scenario.NAMED + scenario.SUB_ACCOUNTS:
        whole = 10_000 + crypto.det_int("named-balance", account_id) % 990_000
        fraction = crypto.det_int("named-fraction", account_id) % NEAR
        accounts[account_id] = _Account(amount=whole * NEAR + fraction)
    for account_id in scenario.IMPLICIT + scenario.ETH_IMPLICIT:
        whole = 1 + crypto.det_int("implicit-balance", account_id) % 100
        fraction = crypto.det_int("implicit-fraction", account_id) % NEAR
        accounts[account_id] = _Account(amount=whole * NEAR + fraction)
    # The counter holds no state until its first call; the token's records add their bytes
    # (the builder's genesis data).
    accounts[scenario.CONTRACT] = _Account(
        amount=50 * NEAR,
        code_hash=crypto.code_hash(wasm.COUNTER.code),
        storage_usage=scenario.BASE_STORAGE + len(wasm.COUNTER.code),
    )
    accounts[scenario.TOKEN] = _Account(
        amount=40 * NEAR + 3,
        code_hash=crypto.code_hash(wasm.FT.code),
        storage_usage=scenario.BASE_STORAGE + len(wasm.FT.code),
    )
    accounts[scenario.GLOBAL_PUBLISHER] = _Account(amount=320 * NEAR)
    accounts[scenario.GLOBAL_BY_HASH_USER] = _Account(
        amount=12 * NEAR,
        storage_usage=scenario.BASE_STORAGE + scenario.GLOBAL_CONTRACT_ID_STORAGE,
        global_contract_hash=crypto.code_hash(wasm.GREETER.code),
    )
    accounts[scenario.GLOBAL_BY_ACCOUNT_USER] = _Account(
        amount=8 * NEAR,
        storage_usage=scenario.BASE_STORAGE + len(scenario.GLOBAL_PUBLISHER),
        global_contract_account_id=scenario.GLOBAL_PUBLISHER,
    )
    accounts[scenario.TEMP] = _Account(amount=3 * NEAR + 17)
    return accounts


def _genesis_token_data() -> dict[bytes, bytes]:
    balances = dict(scenario.TOKEN_HOLDERS)
    balances[scenario.TOKEN] = scenario.TOKEN_SUPPLY - sum(balances.values())
    data = {b"t": _u128(scenario.TOKEN_SUPPLY)}
    data.update((_balance_key(account_id), _u128(amount)) for account_id, amount in balances.items())
    return data


def _u128(value: int) -> bytes:
    return value.to_bytes(16, "little")


def _balance_key(account_id: str) -> bytes:
    return b"b" + account_id.encode()


def _ratio_apply(value: int, ratio: tuple[int, int]) -> int:
    return value * ratio[0] // ratio[1]


def _next_gas_price(price: int, gas_used: int, gas_limit: int) -> int:
    """price * (1 + rate * (used/limit - 1/2)), clamped; unchanged without new chunks."""
    if gas_limit == 0:
        return price
    num, den = scenario.GAS_PRICE_ADJUSTMENT_RATE
    scaled = price * (2 * den * gas_limit + num * (2 * gas_used - gas_limit)) // (2 * den * gas_limit)
    return max(scenario.MIN_GAS_PRICE, min(scenario.MAX_GAS_PRICE, scaled))


class _Builder:
    def __init__(self) -> None:
        self.accounts = _genesis_accounts()
        self.validator_keys = {v: crypto.public_key(scenario.validator_key_label(v)) for v in scenario.VALIDATORS}
        self.total_supply = sum(a.amount + a.locked for a in self.accounts.values())
        self.shard_count = len(scenario.SHARD_IDS)
        self.blocks: list[StoredBlock] = []
        self.headers: dict[str, dict[str, Any]] = {}  # by hash
        self.epochs: list[_Epoch] = []
        self.state_rows: list[AccountStateRow] = []
        self.last_views: dict[str, bytes | None] = {}
        self.state_roots = [crypto.hash_of("genesis-state", s) for s in scenario.SHARD_IDS]
        self.last_chunks: list[dict[str, Any]] = []
        self.counter_calls = 0
        self.keys = KeyLedger()
        self.data: dict[str, dict[bytes, bytes]] = {scenario.CONTRACT: {}, scenario.TOKEN: {}}
        self.data_rows: dict[tuple[int, str, bytes], bytes | None] = {}
        self.old_keys: dict[str, str] = {}  # account -> its full-access key being rotated out
        self.epoch_stakes: list[dict[str, int]] = []  # each epoch's stakes when it opened
        self.locked_at: dict[int, dict[str, int]] = {}  # validators' locked balance after each block
        self.chunks: list[StoredChunk] = []  # every new chunk, ascending height and shard
        self.included: list[tuple[execution.Executed, StoredBlock, int]] = []  # (tx, its block, shard id)
        self.height = scenario.GENESIS_HEIGHT  # the height being built
        self.price = scenario.MIN_GAS_PRICE  # the gas price its transactions pay (the parent's)
        for shard in range(self.shard_count):
            members = [a for a in self.accounts if configs.shard_index(a) == shard]
            if len(members) < 5:
                raise AssertionError(f"sample plan: shard {shard} has only {members}")

    # -- accounts ---------------------------------------------------------------------------

    def _put_data(self, account_id: str, key: bytes, value: bytes | None) -> None:
        """Write (None: remove) one storage key of the account's contract at the current
        height, keeping its storage_usage equal to code + records as nearcore counts them."""
        data = self.data[account_id]
        old = data.pop(key, None)
        record = len(key) + scenario.DATA_RECORD_EXTRA_BYTES
        account = self.accounts[account_id]
        if old is not None:
            account.storage_usage -= record + len(old)
        if value is not None:
            data[key] = value
            account.storage_usage += record + len(value)
        self.data_rows[(self.height, account_id, key)] = value

    def _record(self, height: int, account_ids: list[str]) -> None:
        for account_id in sorted(set(account_ids)):
            account = self.accounts.get(account_id)
            view = None if account is None else orjson.dumps(account.view())
            if self.last_views.get(account_id, b"") != view:
                self.state_rows.append(AccountStateRow(account_id, height, view))
                self.last_views[account_id] = view

    def _submit(
        self,
        work: _ShardWork,
        signer_id: str,
        receiver_id: str,
        actions: list[Any],
        gas: int,
        *,
        call: tuple[int, int, bytes] | None = None,
        by_function_call_key: bool = False,
        balance_refund: tuple[str, int] | None = None,
    ) -> None:
        """Sign, include and execute one transaction in `work`'s chunk. `gas` is what its
        conversion and its receipt's execution fees burn (half each: nearcore's send and
        execution fees of the sample's actions are equal); a function call adds `call`
        (prepaid gas, gas the contract used, its return value), the unused prepaid gas
        refunded. The signer pays what is burnt; callers move deposits and state."""
        price = self.price
        used = 0 if call is None else call[1]
        fee = (gas + used) * price
        if self.accounts[signer_id].amount < fee:
            raise AssertionError(f"sample plan: {signer_id} cannot pay for a transaction at {self.height}")
        signer = self.keys.sign(signer_id, self.height, function_call_fee=fee if by_function_call_key else None)
        self.accounts[signer_id].amount -= fee
        send = gas // 2
        executed = execution.execute(
            execution.Plan(
                signer_id=signer_id,
                signer=signer,
                receiver_id=receiver_id,
                actions=actions,
                reference_hash=self.blocks[-1].hash,
                price=price,
                send_gas=send,
                exec_gas=gas - send,
                prepaid_gas=0 if call is None else call[0],
                used_gas=used,
                return_value=b"" if call is None else call[2],
                balance_refund=balance_refund,
            )
        )
        if executed.tokens_burnt != fee:
            raise AssertionError(f"sample: outcomes burn {executed.tokens_burnt}, the signer paid {fee}")
        work.executed.append(executed)

    def _call(
        self,
        work: _ShardWork,
        signer_id: str,
        receiver_id: str,
        method: str,
        args: bytes,
        *,
        used: int,
        deposit: int = 0,
        prepaid: int = scenario.CALL_PREPAID_GAS,
        value: bytes = b"",
        by_function_call_key: bool = False,
    ) -> None:
        """A transaction of one FunctionCall with nearcore's fees (base and per byte of method
        name and arguments, send and execution alike); the deposit moves to the contract."""
        fee = scenario.ACTION_RECEIPT_GAS + scenario.FUNCTION_CALL_BASE_GAS
        fee += scenario.FUNCTION_CALL_BYTE_GAS * (len(method) + len(args))
        action = {
            "FunctionCall": {
                "method_name": method,
                "args": base64.b64encode(args).decode(),
                "gas": prepaid,
                "deposit": str(deposit),
            }
        }
        self._submit(
            work,
            signer_id,
            receiver_id,
            [action],
            2 * fee,
            call=(prepaid, used, value),
            by_function_call_key=by_function_call_key,
        )
        self.accounts[signer_id].amount -= deposit
        self.accounts[receiver_id].amount += deposit

    def _apply_transactions(self, height: int, produced: list[bool]) -> tuple[list[_ShardWork], list[str]]:
        """Apply the height's transactions; each runs in the chunk of its signer's shard.

        Scheduled events must find their shard's chunk produced (a plan error otherwise);
        the routine calls and transfers just skip a shard without a chunk.
        """
        work = [_ShardWork() for _ in range(self.shard_count)]
        touched: list[str] = []

        def chunk_of(account_id: str, what: str) -> _ShardWork:
            shard = configs.shard_index(account_id)
            if not produced[shard]:
                raise AssertionError(f"sample plan: {what} at {height} needs the chunk of shard {shard}")
            return work[shard]

        for creation in (c for c in scenario.CREATIONS if c.height == height):
            keys = self.keys.new_keys(creation.account_id)
            actions: list[Any] = ["CreateAccount", {"Transfer": {"deposit": str(creation.deposit)}}]
            actions += [{"AddKey": {"public_key": k, "access_key": v}} for k, v in keys.items()]
            shard_work = chunk_of(creation.creator, "account creation")
            self._submit(shard_work, creation.creator, creation.account_id, actions, scenario.CREATE_ACCOUNT_GAS)
            self.accounts[creation.creator].amount -= creation.deposit
            self.accounts[creation.account_id] = _Account(amount=creation.deposit)
            self.keys.open_account(creation.account_id, height)
            touched += [creation.creator, creation.account_id]
        for deletion in (d for d in scenario.DELETIONS if d.height == height):
            shard_work = chunk_of(deletion.account_id, "account deletion")
            account = self.accounts[deletion.account_id]
            fee = scenario.DELETE_ACCOUNT_GAS * self.price
            self._submit(
                shard_work,
                deletion.account_id,
                deletion.account_id,
                [{"DeleteAccount": {"beneficiary_id": deletion.beneficiary}}],
                scenario.DELETE_ACCOUNT_GAS,
                balance_refund=(deletion.beneficiary, account.amount - fee + account.locked),
            )
            gone = self.accounts.pop(deletion.account_id)
            self.keys.close_account(deletion.account_id, height)
            self.accounts[deletion.beneficiary].amount += gone.amount + gone.locked
            touched += [deletion.account_id, deletion.beneficiary]
        touched += self._key_rotations(height, chunk_of)
        for stake in (s for s in scenario.STAKES if s.height == height):
            self._stake(chunk_of(stake.validator, "stake"), stake)
            touched.append(stake.validator)
        if height in scenario.BURST_HEIGHTS:
            for caller in scenario.BURST_CALLERS:
                shard_work = chunk_of(caller, "burst call")
                count = self._counter_value()
                for call in range(scenario.BURST_CALLS_PER_CHUNK):
                    gas = scenario.BURST_CALL_GAS - crypto.det_int("burst", height, caller, call) % 20 * 10**12
                    self._call(
                        shard_work,
                        caller,
                        scenario.CONTRACT,
                        "get_num",
                        b"",
                        used=gas,
                        prepaid=scenario.MAX_PREPAID_GAS,
                        value=str(count).encode(),
                    )
                touched.append(caller)
        if height % scenario.COUNTER_PERIOD == 3:
            touched += self._counter_call(work, produced)
        touched += self._token_calls(height, chunk_of)
        touched += self._transfers(height, work, produced)
        return work, touched

    def _key_rotations(self, height: int, chunk_of: Callable[[str, str], _ShardWork]) -> list[str]:
        touched = []
        for rotation in scenario.KEY_ROTATIONS:
            account_id = rotation.account_id
            if height == rotation.add_height:
                label = f"rotated:{account_id}"
                view = {"nonce": 0, "permission": "FullAccess"}
                action = {"AddKey": {"public_key": crypto.public_key(label), "access_key": view}}
                self._submit(
                    chunk_of(account_id, "key addition"), account_id, account_id, [action], scenario.ADD_KEY_GAS
                )
                self.old_keys[account_id] = self.keys.full_access_key(account_id)
                self.keys.add_full_access_key(account_id, label, height)
                self.accounts[account_id].storage_usage += scenario.FULL_ACCESS_KEY_STORAGE
                touched.append(account_id)
            if height == rotation.delete_height:
                old = self.old_keys.pop(account_id)
                action = {"DeleteKey": {"public_key": old}}
                self._submit(
                    chunk_of(account_id, "key deletion"), account_id, account_id, [action], scenario.DELETE_KEY_GAS
                )
                self.keys.delete_key(account_id, old, height)
                self.accounts[account_id].storage_usage -= scenario.FULL_ACCESS_KEY_STORAGE
                touched.append(account_id)
        return touched

    def _stake(self, work: _ShardWork, stake: scenario.Stake) -> None:
        # Raising a stake locks the difference at once and proposes the new total.
        account = self.accounts[stake.validator]
        total = account.locked + stake.increase
        key = self.validator_keys[stake.validator]
        action = {"Stake": {"stake": str(total), "public_key": key}}
        self._submit(work, stake.validator, stake.validator, [action], scenario.STAKE_GAS)
        account.amount -= stake.increase
        account.locked += stake.increase
        work.proposals.append(
            {
                "validator_stake_struct_version": "V1",
                "account_id": stake.validator,
                "public_key": key,
                "stake": str(account.locked),
            }
        )

    def _counter_value(self) -> int:
        return int.from_bytes(self.data[scenario.CONTRACT].get(b"STATE", bytes(8)), "little", signed=True)

    def _counter_call(self, work: list[_ShardWork], produced: list[bool]) -> list[str]:
        caller = scenario.COUNTER_CALLERS[self.counter_calls % len(scenario.COUNTER_CALLERS)]
        shard = configs.shard_index(caller)
        if not produced[shard]:
            return []
        self.counter_calls += 1
        decrement = self.counter_calls % scenario.COUNTER_DECREMENT_EVERY == 0
        used = scenario.COUNTER_CALL_USED_GAS + crypto.det_int("counter-gas", self.height) % 10**11
        method = "decrement" if decrement else "increment"
        self._call(work[shard], caller, scenario.CONTRACT, method, b"", used=used, by_function_call_key=True)
        count = self._counter_value() + (-1 if decrement else 1)
        self._put_data(scenario.CONTRACT, b"STATE", count.to_bytes(8, "little", signed=True))
        return [caller, scenario.CONTRACT]

    def _token_calls(self, height: int, chunk_of: Callable[[str, str], _ShardWork]) -> list[str]:
        """The height's ft_transfer and storage_unregister calls, each with 1 yoctoNEAR
        attached (signed by the full-access key: the function-call key is for the counter)."""
        touched: list[str] = []
        balances = self.data[scenario.TOKEN]
        for transfer in (t for t in scenario.TOKEN_TRANSFERS if t.height == height):
            sender_key, receiver_key = _balance_key(transfer.sender), _balance_key(transfer.receiver)
            sender_balance = int.from_bytes(balances[sender_key], "little")
            if sender_balance < transfer.amount:
                raise AssertionError(f"sample plan: {transfer.sender} holds too few tokens at {height}")
            receiver_balance = int.from_bytes(balances.get(receiver_key, bytes(16)), "little")
            work = chunk_of(transfer.sender, "token transfer")
            args = orjson.dumps({"receiver_id": transfer.receiver, "amount": str(transfer.amount)})
            used = scenario.TOKEN_CALL_USED_GAS + crypto.det_int("ft-gas", height, transfer.sender) % 10**12
            self._call(work, transfer.sender, scenario.TOKEN, "ft_transfer", args, used=used, deposit=1)
            self._put_data(scenario.TOKEN, sender_key, _u128(sender_balance - transfer.amount))
            self._put_data(scenario.TOKEN, receiver_key, _u128(receiver_balance + transfer.amount))
            touched += [transfer.sender, scenario.TOKEN]
        for unregister_height, account_id in scenario.TOKEN_UNREGISTERS:
            if unregister_height != height:
                continue
            if balances[_balance_key(account_id)] != bytes(16):
                raise AssertionError(f"sample plan: {account_id} still holds tokens at {height}")
            work = chunk_of(account_id, "token unregister")
            used = scenario.TOKEN_CALL_USED_GAS + crypto.det_int("unregister-gas", height, account_id) % 10**12
            # NEP-145's storage_unregister answers true when the account was registered.
            self._call(
                work, account_id, scenario.TOKEN, "storage_unregister", b"{}", used=used, deposit=1, value=b"true"
            )
            self._put_data(scenario.TOKEN, _balance_key(account_id), None)
            touched += [account_id, scenario.TOKEN]
        return touched

    def _transfers(self, height: int, work: list[_ShardWork], produced: list[bool]) -> list[str]:
        touched: list[str] = []
        pool = [a for a in scenario.TRANSFER_POOL if a in self.accounts]
        # An ETH-implicit account receives but never signs: it has no access key.
        senders = [a for a in pool if self.keys.has_keys(a)]
        for n in range(crypto.det_int("transfers", height) % 3):
            sender = senders[crypto.det_int("sender", height, n) % len(senders)]
            receiver = pool[crypto.det_int("receiver", height, n) % len(pool)]
            shard = configs.shard_index(sender)
            amount = (1 + crypto.det_int("amount", height, n) % 500) * 10**22  # 0.01 to 5 NEAR
            if sender == receiver or not produced[shard]:
                continue
            if self.accounts[sender].amount < amount + scenario.TRANSFER_GAS * self.price:
                continue
            action = {"Transfer": {"deposit": str(amount)}}
            self._submit(work[shard], sender, receiver, [action], scenario.TRANSFER_GAS)
            self.accounts[sender].amount -= amount
            self.accounts[receiver].amount += amount
            touched += [sender, receiver]
        return touched

    def _mint_epoch_reward(self) -> tuple[int, list[str]]:
        """The reward of the epoch that just ended: a share of the total supply by the
        maximum inflation rate, the protocol's part to the treasury, the rest to validators
        by stake (all of them were fully online)."""
        reward = (
            self.total_supply
            * scenario.MAX_INFLATION_RATE[0]
            * scenario.EPOCH_LENGTH
            // (scenario.MAX_INFLATION_RATE[1] * scenario.NUM_BLOCKS_PER_YEAR)
        )
        treasury_part = _ratio_apply(reward, scenario.PROTOCOL_REWARD_RATE)
        stakes = {v: self.accounts[v].locked for v in scenario.VALIDATORS}
        total_stake = sum(stakes.values())
        minted = treasury_part
        self.accounts[scenario.TREASURY].amount += treasury_part
        for validator, stake in stakes.items():
            share = (reward - treasury_part) * stake // total_stake
            self.accounts[validator].locked += share
            minted += share
        return minted, [scenario.TREASURY, *scenario.VALIDATORS]

    # -- block parts --------------------------------------------------------------------------

    def _bp_hash(self) -> str:
        producers = [[v, self.validator_keys[v], str(self.accounts[v].locked)] for v in scenario.VALIDATORS]
        return crypto.hash_of("block-producers", crypto.canonical_bytes(producers))

    def _congestion_info(self, height: int, shard: int, busy: bool) -> dict[str, Any]:
        allowed = scenario.SHARD_IDS[(height + shard + 1) % self.shard_count]
        if not busy:
            return {
                "delayed_receipts_gas": "0",
                "buffered_receipts_gas": "0",
                "receipt_bytes": 0,
                "allowed_shard": allowed,
            }
        return {
            "delayed_receipts_gas": str(crypto.det_int("delayed", height, shard) % 10**15),
            "buffered_receipts_gas": str(crypto.det_int("buffered", height, shard) % 10**14),
            "receipt_bytes": 4_096 + crypto.det_int("receipt-bytes", height, shard) % 60_000,
            "allowed_shard": allowed,
        }

    def _bandwidth_requests(self, height: int, shard: int, busy: bool) -> dict[str, Any]:
        requests = []
        if busy:
            for target in range(self.shard_count):
                if target == shard:
                    continue
                bitmap = list(crypto.digest("bandwidth", height, shard, target)[:5])
                requests.append(
                    {
                        "to_shard": scenario.SHARD_IDS[target],
                        "requested_values_bitmap": {"data": bitmap},
                    }
                )
        return {"V1": {"requests": requests}}

    def _chunk(
        self,
        *,
        height: int,
        shard: int,
        prev_block_hash: str,
        work: _ShardWork,
        busy: bool,
        producer: str | None,
    ) -> dict[str, Any]:
        shard_id = scenario.SHARD_IDS[shard]
        prev_state_root = self.state_roots[shard]
        tx_hashes = crypto.canonical_bytes([e.tx_hash for e in work.executed])
        self.state_roots[shard] = crypto.hash_of("state", prev_state_root, height, tx_hashes)
        tx_root, _ = merkle.merklize([e.signed_bytes for e in work.executed])
        outcomes = [o for e in work.executed for o in e.outcomes]
        outcome_root, proofs = merkle.merklize([execution.outcome_leaf(o) for o in outcomes])
        for outcome, proof in zip(outcomes, proofs, strict=True):
            outcome["proof"] = proof
        receipt_ids = [r["receipt_id"] for e in work.executed for r in e.receipts]
        chunk: dict[str, Any] = {
            "chunk_hash": "",
            "prev_block_hash": prev_block_hash,
            "outcome_root": outcome_root,
            "prev_state_root": prev_state_root,
            "encoded_merkle_root": crypto.hash_of("encoded", shard_id, height, tx_hashes),
            "encoded_length": 8 + sum(len(e.signed_bytes) for e in work.executed) + height % 5,
            "height_created": height,
            "height_included": height,
            "shard_id": shard_id,
            "gas_used": work.gas_used,
            "gas_limit": scenario.GAS_LIMIT,
            "rent_paid": "0",
            "validator_reward": "0",
            "balance_burnt": str(work.balance_burnt),
            "outgoing_receipts_root": crypto.hash_of("receipts", shard_id, crypto.canonical_bytes(receipt_ids)),
            "tx_root": tx_root,
            "validator_proposals": work.proposals,
            "congestion_info": self._congestion_info(height, shard, busy),
            "bandwidth_requests": self._bandwidth_requests(height, shard, busy),
            "signature": "",
        }
        chunk["chunk_hash"] = crypto.chunk_hash(chunk)
        chunk["signature"] = (
            EMPTY_SIGNATURE
            if producer is None
            else crypto.signature(scenario.validator_key_label(producer), chunk["chunk_hash"])
        )
        return chunk

    def _store(self, header: dict[str, Any], author: str, chunks: list[dict[str, Any]]) -> None:
        header["hash"] = crypto.block_hash(header)
        header["signature"] = (
            EMPTY_SIGNATURE
            if header["height"] == scenario.GENESIS_HEIGHT
            else crypto.signature(scenario.validator_key_label(author), header["hash"])
        )
        view = {"author": author, "header": header, "chunks": chunks}
        self.headers[header["hash"]] = header
        self.blocks.append(block_from_view(view, orjson.dumps(view)))

    def _header(
        self,
        *,
        height: int,
        prev_height: int,
        prev_hash: str,
        epoch_id: str,
        next_epoch_id: str,
        chunks: list[dict[str, Any]],
        chunk_mask: list[bool],
        timestamp: int,
        random_value: str,
        gas_price: int,
        block_ordinal: int,
        last_final_block: str,
        last_ds_final_block: str,
        next_bp_hash: str,
        block_merkle_root: str,
        epoch_sync_data_hash: str | None,
        approvals: list[str | None],
        proposals: list[dict[str, str]],
        chunk_endorsements: list[list[int]],
    ) -> dict[str, Any]:
        def root(label: str, key: str) -> str:
            return crypto.hash_of(label, crypto.canonical_bytes([c[key] for c in chunks]))

        # BlockHeaderView members in nearcore's order. `prev_last_certified_block_epoch_id`
        # and `spice_chunk_endorsement_stats` are left out: nearcore omits them when unset.
        return {
            "height": height,
            "prev_height": prev_height,
            "epoch_id": epoch_id,
            "next_epoch_id": next_epoch_id,
            "hash": "",
            "prev_hash": prev_hash,
            "prev_state_root": root("state-roots", "prev_state_root"),
            "block_body_hash": crypto.hash_of(
                "body", crypto.canonical_bytes([c["chunk_hash"] for c in chunks]), height
            ),
            "chunk_receipts_root": root("receipt-roots", "outgoing_receipts_root"),
            "chunk_headers_root": root("chunk-headers", "chunk_hash"),
            "chunk_tx_root": root("tx-roots", "tx_root"),
            "outcome_root": root("outcome-roots", "outcome_root"),
            "chunks_included": sum(chunk_mask),
            "challenges_root": ZERO_HASH,
            "timestamp": timestamp,
            "timestamp_nanosec": str(timestamp),
            "random_value": random_value,
            "validator_proposals": proposals,
            "chunk_mask": chunk_mask,
            "gas_price": str(gas_price),
            "block_ordinal": block_ordinal,
            "rent_paid": "0",
            "validator_reward": "0",
            "total_supply": str(self.total_supply),
            "challenges_result": [],
            "last_final_block": last_final_block,
            "last_ds_final_block": last_ds_final_block,
            "next_bp_hash": next_bp_hash,
            "block_merkle_root": block_merkle_root,
            "epoch_sync_data_hash": epoch_sync_data_hash,
            "approvals": approvals,
            "signature": "",
            "latest_protocol_version": scenario.LATEST_PROTOCOL_VERSION,
            "chunk_endorsements": chunk_endorsements,
            "shard_split": None,
        }

    # -- the chain ----------------------------------------------------------------------------

    def genesis(self) -> None:
        height = scenario.GENESIS_HEIGHT
        self.epochs.append(_Epoch(0, ZERO_HASH, height, scenario.GENESIS_PROTOCOL_VERSION, self._bp_hash()))
        self.last_chunks = []
        for shard in range(self.shard_count):
            chunk = self._chunk(
                height=height,
                shard=shard,
                prev_block_hash=ZERO_HASH,
                work=_ShardWork(),
                busy=False,
                producer=None,
            )
            # A genesis chunk carries default congestion info.
            chunk["congestion_info"]["allowed_shard"] = 0
            chunk["chunk_hash"] = crypto.chunk_hash(chunk)
            self.last_chunks.append(chunk)
        header = self._header(
            height=height,
            # nearcore's genesis header stores prev_height 0 (there is no parent).
            prev_height=0,
            prev_hash=ZERO_HASH,
            epoch_id=ZERO_HASH,
            next_epoch_id=ZERO_HASH,
            chunks=self.last_chunks,
            chunk_mask=[True] * self.shard_count,
            timestamp=_genesis_time_ns(),
            random_value=ZERO_HASH,
            gas_price=scenario.MIN_GAS_PRICE,
            block_ordinal=1,
            # nearcore's genesis header points both finality members at the zero hash.
            last_final_block=ZERO_HASH,
            last_ds_final_block=ZERO_HASH,
            next_bp_hash=self.epochs[0].next_bp_hash,
            block_merkle_root=ZERO_HASH,
            epoch_sync_data_hash=None,
            approvals=[],
            proposals=[],
            chunk_endorsements=[],
        )
        self._store(header, scenario.VALIDATORS[0], self.last_chunks)
        for shard, chunk in enumerate(self.last_chunks):
            self._include(chunk, self._chunk_producer(height, shard), _ShardWork())
        self.epoch_stakes.append(self._locked())
        self.locked_at[height] = self._locked()
        self.epochs[0].votes.add(scenario.LATEST_PROTOCOL_VERSION)
        for key, value in _genesis_token_data().items():
            self._put_data(scenario.TOKEN, key, value)
        self._record(height, list(self.accounts))
        for account_id in sorted(self.accounts):
            self.keys.open_account(account_id, height, is_validator=account_id in self.validator_keys)

    def _ends_epoch(self, header: dict[str, Any]) -> bool:
        epoch = self.epochs[-1]
        next_start = epoch.first_height + scenario.EPOCH_LENGTH
        final = self.headers.get(header["last_final_block"])
        final_height = scenario.GENESIS_HEIGHT if final is None else final["height"]
        return bool(header["height"] + 1 >= next_start and final_height + 3 >= next_start)

    def _open_epoch(self, height: int, parent_hash: str) -> None:
        previous = self.epochs[-1]
        previous.last_hash = parent_hash
        index = previous.index + 1
        if index == 1:
            epoch_id = self.blocks[0].hash  # the genesis hash
        else:
            two_back = self.epochs[index - 2].last_hash
            assert two_back is not None
            epoch_id = two_back
        version = previous.protocol_version
        if index >= scenario.UPGRADE_DELAY_EPOCHS:
            voted = self.epochs[index - scenario.UPGRADE_DELAY_EPOCHS].votes
            version = max([version, *voted])
        self.epochs.append(_Epoch(index, epoch_id, height, version, self._bp_hash()))

    def _next_epoch_id(self) -> str:
        # The id of the epoch after the current one: the genesis hash while in the first
        # epoch, else the hash of the last block of the previous epoch.
        current = self.epochs[-1]
        if current.index == 0:
            return self.blocks[0].hash
        last = self.epochs[current.index - 1].last_hash
        assert last is not None
        return last

    def block(self, height: int) -> None:
        self.height = height
        parent = self.blocks[-1]
        parent_header = self.headers[parent.hash]
        new_epoch = self._ends_epoch(parent_header)
        minted = 0
        touched: list[str] = []
        if new_epoch:
            self._open_epoch(height, parent.hash)
            minted, touched = self._mint_epoch_reward()
            self.epoch_stakes.append(self._locked())
        epoch = self.epochs[-1]
        author = scenario.VALIDATORS[height % len(scenario.VALIDATORS)]
        produced = [(height, s) not in scenario.MISSING_CHUNKS for s in range(self.shard_count)]
        price = int(parent_header["gas_price"])
        self.price = price
        work, tx_touched = self._apply_transactions(height, produced)
        touched += tx_touched

        chunks: list[dict[str, Any]] = []
        for shard in range(self.shard_count):
            if not produced[shard]:
                chunks.append(self.last_chunks[shard])
                continue
            producer = self._chunk_producer(height, shard)
            chunk = self._chunk(
                height=height,
                shard=shard,
                prev_block_hash=parent.hash,
                work=work[shard],
                busy=height in scenario.BURST_HEIGHTS,
                producer=producer,
            )
            chunks.append(chunk)
        self.last_chunks = chunks

        burnt = sum(w.balance_burnt for w in work)
        self.total_supply += minted - burnt
        used = sum(work[s].gas_used for s in range(self.shard_count) if produced[s])
        limit = scenario.GAS_LIMIT * sum(produced)
        consecutive = parent.height + 1 == height
        approvals: list[str | None] = []
        for index, validator in enumerate(scenario.VALIDATORS):
            offline = validator != author and crypto.det_int("offline", height, index) % 11 == 0
            approval = crypto.approval_data(parent.hash, parent.height, height)
            approvals.append(None if offline else crypto.sign(scenario.validator_key_label(validator), approval))
        endorsements = []
        for shard in range(self.shard_count):
            if not produced[shard]:
                endorsements.append([0])
                continue
            bits = 0b1111
            if crypto.det_int("endorsement", height, shard) % 9 == 0:
                bits &= ~(1 << (crypto.det_int("missing-endorser", height, shard) % 4))
            endorsements.append([bits])
        interval = (height - parent.height) * 1_000_000_000
        jitter = 50_000_000 + crypto.det_int("time", height) % 250_000_000
        header = self._header(
            height=height,
            prev_height=parent.height,
            prev_hash=parent.hash,
            epoch_id=epoch.epoch_id,
            next_epoch_id=self._next_epoch_id(),
            chunks=chunks,
            chunk_mask=produced,
            timestamp=parent_header["timestamp"] + interval + jitter,
            random_value=crypto.hash_of("vrf", parent_header["random_value"], author, height),
            gas_price=_next_gas_price(price, used, limit),
            block_ordinal=parent_header["block_ordinal"] + 1,
            last_final_block=parent_header["last_ds_final_block"] if consecutive else parent_header["last_final_block"],
            last_ds_final_block=parent.hash if consecutive else parent_header["last_ds_final_block"],
            next_bp_hash=epoch.next_bp_hash,
            block_merkle_root=crypto.hash_of("block-merkle", parent_header["block_merkle_root"], parent.hash),
            epoch_sync_data_hash=crypto.hash_of("epoch-sync", epoch.epoch_id, height) if new_epoch else None,
            approvals=approvals,
            proposals=[p for w in work for p in w.proposals],
            chunk_endorsements=endorsements,
        )
        self._store(header, author, chunks)
        for shard, chunk in enumerate(chunks):
            if produced[shard]:
                self._include(chunk, self._chunk_producer(height, shard), work[shard])
        self.locked_at[height] = self._locked()
        epoch.votes.add(scenario.LATEST_PROTOCOL_VERSION)
        self._record(height, touched)

    def _locked(self) -> dict[str, int]:
        return {v: self.accounts[v].locked for v in scenario.VALIDATORS}

    def _validators(self) -> list[StoredValidators]:
        """Each epoch's `validators` result as of its last block (the head's for the last)."""
        records = []
        headers = [self.headers[b.hash] for b in self.blocks]
        for epoch, stakes in zip(self.epochs, self.epoch_stakes, strict=True):
            members = [h for h in headers if h["epoch_id"] == epoch.epoch_id]
            last = members[-1]["height"]
            view = validators.epoch_validator_info(
                validators=scenario.VALIDATORS,
                keys=self.validator_keys,
                shard_ids=scenario.SHARD_IDS,
                epoch_index=epoch.index,
                first_height=epoch.first_height,
                genesis_height=scenario.GENESIS_HEIGHT,
                headers=members,
                stakes=stakes,
                next_stakes=self.locked_at[last],
            )
            records.append(StoredValidators(epoch.epoch_id, last, orjson.dumps(view)))
        return records

    @staticmethod
    def _chunk_producer(height: int, shard: int) -> str:
        return scenario.VALIDATORS[(height + shard) % len(scenario.VALIDATORS)]

    def _include(self, chunk: dict[str, Any], producer: str, work: _ShardWork) -> None:
        """Keep a new chunk's `chunk` view and its transactions, now that its block's hash is
        known (every outcome names the block)."""
        block = self.blocks[-1]
        for executed in work.executed:
            for outcome in executed.outcomes:
                outcome["block_hash"] = block.hash
        view = {
            "author": producer,
            "header": chunk,
            "transactions": [e.transaction for e in work.executed],
            "receipts": [r for e in work.executed for r in e.receipts],
        }
        self.chunks.append(
            StoredChunk(chunk["chunk_hash"], block.hash, block.height, chunk["shard_id"], orjson.dumps(view))
        )
        self.included.extend((executed, block, chunk["shard_id"]) for executed in work.executed)

    def _executed_records(self, final_height: int) -> tuple[list[StoredTransaction], list[StoredReceipt]]:
        """The transactions' EXPERIMENTAL_tx_status results and their receipts, ordered by
        height, then chunk, then order in the chunk. A transaction in a block at or below the
        head's final block is FINAL; above it, EXECUTED_OPTIMISTIC (all executed in its block)."""
        transactions: list[StoredTransaction] = []
        receipts: list[StoredReceipt] = []
        for executed, block, shard_id in self.included:
            status = "FINAL" if block.height <= final_height else "EXECUTED_OPTIMISTIC"
            view = {
                "status": executed.status,
                "transaction": executed.transaction,
                "transaction_outcome": executed.outcomes[0],
                "receipts_outcome": executed.outcomes[1:],
                "receipts": executed.receipts,
                "final_execution_status": status,
            }
            transactions.append(
                StoredTransaction(
                    executed.tx_hash, executed.signer_id, block.hash, block.height, shard_id, orjson.dumps(view)
                )
            )
            for receipt, outcome in zip(executed.receipts, executed.outcomes[1:], strict=True):
                receipts.append(
                    StoredReceipt(
                        receipt["receipt_id"],
                        block.hash,
                        block.height,
                        scenario.SHARD_IDS[configs.shard_index(receipt["receiver_id"])],
                        orjson.dumps(receipt),
                        orjson.dumps(outcome),
                    )
                )
        return transactions, receipts

    def finish(self) -> SampleChain:
        genesis_validators = [
            {
                "account_id": v,
                "public_key": self.validator_keys[v],
                "amount": str(stake),
            }
            for v, stake in zip(scenario.VALIDATORS, scenario.VALIDATOR_STAKES, strict=True)
        ]
        genesis_supply = sum(
            int(orjson.loads(row.view_json)["amount"]) + int(orjson.loads(row.view_json)["locked"])
            for row in self.state_rows
            if row.height == scenario.GENESIS_HEIGHT and row.view_json is not None
        )
        genesis = configs.genesis_config(genesis_validators, genesis_supply)
        epoch_config = orjson.dumps(configs.epoch_config(genesis))
        epochs = tuple(StoredEpoch(e.epoch_id, e.protocol_version, epoch_config) for e in self.epochs)
        rows = sorted(self.state_rows, key=lambda r: (r.height, r.account_id))
        head = self.headers[self.blocks[-1].hash]
        final_height = self.headers[head["last_final_block"]]["height"]
        transactions, receipts = self._executed_records(final_height)
        return SampleChain(
            genesis_config_json=orjson.dumps(genesis),
            client_config_json=orjson.dumps(configs.client_config()),
            blocks=tuple(self.blocks),
            epochs=epochs,
            account_states=tuple(rows),
            access_keys=self.keys.rows(),
            contract_codes=tuple((crypto.code_hash(c.code), c.code) for c in (wasm.COUNTER, wasm.FT)),
            contract_data=tuple(
                ContractDataRow(account_id, key, height, value)
                for (height, account_id, key), value in sorted(self.data_rows.items(), key=lambda item: item[0])
            ),
            chunks=tuple(self.chunks),
            transactions=tuple(transactions),
            receipts=tuple(receipts),
            validators=tuple(self._validators()),
        )


def generate_sample_chain() -> SampleChain:
    """Build the sample chain in memory. Deterministic: the same bytes on every call."""
    builder = _Builder()
    builder.genesis()
    for height in range(scenario.GENESIS_HEIGHT + 1, scenario.HEAD_HEIGHT + 1):
        if height not in scenario.SKIPPED_HEIGHTS:
            builder.block(height)
    return builder.finish()
