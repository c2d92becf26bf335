"""NEAR's host functions for a view call (module `env`), over one call's state.

Behaviour and costs from nearcore's runtime/near-vm-runner/src/logic/logic.rs (`VMLogic`, one
method per host function) and its helpers: `get_memory_or_register` (a length of u64::MAX reads
the register the pointer names), `Registers::check_set_register` in logic/vmstate.rs (size, count and
memory limits, all `MemoryAccessViolation`), `get_utf8_string` / `get_utf16_string` (the log length
limit, `BadUTF8` / `BadUTF16`), `ResultState::checked_push_log` (NumberOfLogsExceeded,
TotalLogLengthExceeded). Every host function pays `base` first; a function prohibited in a view
then fails with `ProhibitedInView` naming the function whose check ran (logic.rs:
`promise_create` runs `promise_batch_create`'s, `promise_then` `promise_batch_then`'s and
`promise_batch_action_function_call_weight` `promise_batch_action_function_call`'s; the list is
logic/tests/view_method.rs `test_prohibited_view_methods` plus the later promise functions).
The `storage_iter_*` functions are `Deprecated` (logic.rs). Trie-node costs
(`touching_trie_node`) are not charged: the store holds values, not nearcore's trie.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from nearrpc.contracts import crypto, errors
from nearrpc.contracts.budget import MemoryBudget
from nearrpc.contracts.errors import HostFunctionUnavailable
from nearrpc.contracts.gas import GasCounter, GasExhausted
from nearrpc.contracts.keccak import keccak

U64_MAX = (1 << 64) - 1
INLINE_DISK_VALUE_THRESHOLD = 4000  # near-primitives-core config: larger values cost a large-read overhead
# a view call keeps what it read up to this many bytes of keys and values (ViewLogic._stored)
READS_KEPT_BYTES = 4 << 20


# near-primitives account id rules (AccountId::validate): 2 to 64 characters, parts of lowercase
# letters and digits joined by `-` or `_`, separated by dots
_ACCOUNT_ID = re.compile(r"(?:(?:[a-z\d]+[-_])*[a-z\d]+\.)*(?:[a-z\d]+[-_])*[a-z\d]+")


class ValidatorStakes(Protocol):
    """The stakes of the validators of the block's epoch, by account (what nearcore's
    `EpochInfoProvider::validator_stake` reads); None when the store holds no record of them."""

    def stakes(self) -> Mapping[str, int] | None: ...


class StateReader(Protocol):
    """The contract's storage as of the block: the store (a sync adaptor) or a fork provides it."""

    def storage_read(self, key: bytes) -> bytes | None: ...


@dataclass(frozen=True)
class ViewContext:
    """The block and account a view runs against (nearcore's VMContext for a view, built in
    runtime/runtime/src/state_viewer/mod.rs `TrieViewer::call_function`): the account's balance,
    locked balance and storage usage as of the block; `random_seed` is the 32 bytes of the state
    root the view reads (nearcore passes the trie root as the seed), `epoch_height` the block's
    epoch's."""

    account_id: str
    block_height: int
    block_timestamp: int
    epoch_height: int
    account_balance: int
    account_locked_balance: int
    storage_usage: int
    random_seed: bytes
    epoch_id: str = ""
    validators: ValidatorStakes | None = None


class Abort(Exception):
    """A host function ended the call: `debug` is the FunctionCallError's Debug text."""

    def __init__(self, debug: str) -> None:
        super().__init__(debug)
        self.debug = debug


class Memory(Protocol):
    def read(self, start: int, stop: int) -> bytes: ...
    def write(self, data: bytes, start: int) -> None: ...
    def holds(self, stop: int) -> bool: ...


class ViewLogic:
    """One view call's registers, logs, return value and gas; host functions are its methods."""

    # host functions a subclass runs instead of the table's entry (a call's writing functions,
    # call.py), by name; a view has none
    overrides: ClassVar[Mapping[str, Callable[..., int | None]]] = {}

    def __init__(self, context: ViewContext, args: bytes, state: StateReader, gas: GasCounter, memory: Memory) -> None:
        self.context = context
        self.args = args
        self.state = state
        self.gas = gas
        self.costs = gas.costs
        self._ext = gas.costs.ext
        self.memory = memory
        self.profiled = gas.profile is not None  # a call's counter keeps a profile by ext cost
        self.registers: dict[int, bytes] = {}
        self._registers_usage = 0  # the sum over registers of their length plus eight
        self.logs: list[str] = []
        self.total_log_length = 0
        self.returned: bytes | None = None
        # what this call read: a view writes nothing, so a key read again has the same value
        # (a near-sdk TreeMap walks from its root at each step: nft_tokens over 500 tokens reads
        # 2,000 keys 6,700 times), and each read the state answers may cost a trip to the store
        self._read: dict[bytes, bytes | None] = {}
        self._read_bytes = 0
        # the charges of the host functions a near-sdk contract calls most (storage_read,
        # register_len, read_register), summed where nothing between them can fail: one charge
        # for several ends where they would (GasCounter.pay), so the gas and answers are the same
        ext = self._ext
        self._base = ext.get("base", 0)
        self._read_register_fixed = self._base + ext.get("read_register_base", 0) + ext.get("write_memory_base", 0)
        self._read_register_byte = ext.get("read_register_byte", 0) + ext.get("write_memory_byte", 0)
        self._storage_read_fixed = self._base + ext.get("storage_read_base", 0)
        self._read_memory_base = ext.get("read_memory_base", 0)
        self._read_memory_byte = ext.get("read_memory_byte", 0)
        self._storage_read_key_byte = ext.get("storage_read_key_byte", 0)
        self._storage_read_value_byte = ext.get("storage_read_value_byte", 0)
        # the process's budget of bytes held by calls in flight (budget.py), where the call has one
        self.budget: MemoryBudget | None = None
        self.held = 0  # bytes this call holds of the budget

    def _hold(self, before: int, after: int) -> None:
        """Account a change of the call's held bytes from `before` to `after` against the budget."""
        budget = self.budget
        if budget is None or before == after:
            return
        if after > before:
            budget.take(after - before)  # ExecutionInterrupted(MEMORY) past the budget
        else:
            budget.give(before - after)
        self.held += after - before

    # --- gas and memory ---------------------------------------------------------------------
    def pay(self, name: str, times: int = 1) -> None:
        try:
            if self.profiled:  # gas_counter.rs `pay_base` / `pay_per`: the profile's entry too
                self.gas.pay_named(name, self._ext.get(name, 0) * times)
            else:
                self.gas.pay(self._ext.get(name, 0) * times)  # GasCounter.pay_ext, a call less per charge
        except GasExhausted:
            raise Abort(self.gas.exhausted_text) from None

    def pay_both(self, base: str, per_byte: str, length: int) -> None:
        """pay(base) then pay(per_byte, length); a view's as one charge: running out at either
        is the same answer (GasCounter.pay ends at the limit), and a slice runs out at the same
        point. A call's profile gets each."""
        ext = self._ext
        try:
            if self.profiled:
                self.gas.pay_named(base, ext.get(base, 0))
                self.gas.pay_named(per_byte, ext.get(per_byte, 0) * length)
            else:
                self.gas.pay(ext.get(base, 0) + ext.get(per_byte, 0) * length)
        except GasExhausted:
            raise Abort(self.gas.exhausted_text) from None

    def read_memory(self, ptr: int, length: int) -> bytes:
        self.pay_both("read_memory_base", "read_memory_byte", length)
        if not self.memory.holds(ptr + length):
            raise Abort(errors.memory_access_violation())
        return self.memory.read(ptr, ptr + length)

    def write_memory(self, ptr: int, data: bytes) -> None:
        self.pay_both("write_memory_base", "write_memory_byte", len(data))
        if not self.memory.holds(ptr + len(data)):
            raise Abort(errors.memory_access_violation())
        self.memory.write(data, ptr)

    def read_register(self, register_id: int) -> bytes:
        data = self.registers.get(register_id)
        if data is None:
            raise Abort(errors.invalid_register_id(register_id))
        self.pay_both("read_register_base", "read_register_byte", len(data))
        return data

    def set_register(self, register_id: int, data: bytes) -> None:
        self.pay_both("write_register_base", "write_register_byte", len(data))
        limits = self.costs
        if len(data) > limits.max_register_size:
            raise Abort(errors.memory_access_violation())
        # at the count limit even a replacement fails: nearcore keeps that old bug as protocol
        if len(self.registers) >= limits.max_number_registers:
            raise Abort(errors.memory_access_violation())
        # each register counts its length plus eight bytes (a u64), as nearcore approximates it
        replaced = self.registers.get(register_id)
        usage = self._registers_usage - (0 if replaced is None else len(replaced) + 8) + len(data) + 8
        if usage > limits.registers_memory_limit:
            raise Abort(errors.memory_access_violation())
        self._hold(self._registers_usage, usage)
        self.registers[register_id] = data
        self._registers_usage = usage

    def memory_or_register(self, ptr: int, length: int) -> bytes:
        if length == U64_MAX:
            return self.read_register(ptr)
        return self.read_memory(ptr, length)

    # --- strings and logs ----------------------------------------------------------------------
    def _log_room(self) -> int:
        return self.costs.max_total_log_length - self.total_log_length

    def _too_long(self, length: int) -> Abort:
        return Abort(errors.total_log_length_exceeded(self.total_log_length + length, self.costs.max_total_log_length))

    def utf8_string(self, length: int, ptr: int) -> str:
        self.pay("utf8_decoding_base")
        if length != U64_MAX:
            if length > self._log_room():
                raise self._too_long(length)
            raw = self.read_memory(ptr, length)
        else:
            collected = bytearray()
            while True:
                byte = self.read_memory(ptr + len(collected), 1)[0]
                if byte == 0:
                    break
                collected.append(byte)
                if len(collected) > self._log_room():
                    raise self._too_long(len(collected))
            raw = bytes(collected)
        self.pay("utf8_decoding_byte", len(raw))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Abort(errors.bad_utf8()) from None

    def utf16_string(self, length: int, ptr: int) -> str:
        self.pay("utf16_decoding_base")
        room = self._log_room()
        if length != U64_MAX:
            raw = self.read_memory(ptr, length)  # read first, then judged (logic.rs get_utf16_string)
            if len(raw) % 2:
                raise Abort(errors.bad_utf16())
            if length > room:
                raise self._too_long(length)
        else:
            size = 0
            while self.read_memory(ptr + size, 2) != b"\x00\x00":
                size += 2
                if size > room:
                    raise self._too_long(size)
            raw = self.memory.read(ptr, ptr + size)
        self.pay("utf16_decoding_byte", len(raw))
        try:
            return raw.decode("utf-16-le")
        except UnicodeDecodeError:
            raise Abort(errors.bad_utf16()) from None

    def check_can_log(self) -> None:
        if len(self.logs) >= self.costs.max_number_logs:
            raise Abort(errors.number_of_logs_exceeded(self.costs.max_number_logs))

    def push_log(self, message: str) -> None:
        length = len(message.encode())
        if self.total_log_length + length > self.costs.max_total_log_length:
            raise self._too_long(length)
        self.total_log_length += length
        self.logs.append(message)

    # --- registers -------------------------------------------------------------------------------
    def h_read_register(self, register_id: int, ptr: int) -> None:
        # base, read_register's and write_memory's charges (GasExhausted: the crossing's Abort)
        data = self.registers.get(register_id)
        if data is None:
            self.pay("base")
            raise Abort(errors.invalid_register_id(register_id))
        if self.profiled:
            self.pay("base")
            self.pay_both("read_register_base", "read_register_byte", len(data))
            self.pay_both("write_memory_base", "write_memory_byte", len(data))
        else:
            self.gas.pay(self._read_register_fixed + self._read_register_byte * len(data))
        memory = self.memory
        if not memory.holds(ptr + len(data)):
            raise Abort(errors.memory_access_violation())
        memory.write(data, ptr)

    def h_register_len(self, register_id: int) -> int:
        if self.profiled:
            self.pay("base")
        else:
            self.gas.pay(self._base)
        data = self.registers.get(register_id)
        return U64_MAX if data is None else len(data)

    def h_write_register(self, register_id: int, data_len: int, data_ptr: int) -> None:
        self.pay("base")
        self.set_register(register_id, self.read_memory(data_ptr, data_len))

    # --- context -----------------------------------------------------------------------------------
    def h_current_account_id(self, register_id: int) -> None:
        self.pay("base")
        self.set_register(register_id, self.context.account_id.encode())

    def h_input(self, register_id: int) -> None:
        self.pay("base")
        self.set_register(register_id, self.args)

    def h_block_index(self) -> int:
        self.pay("base")
        return self.context.block_height

    def h_block_timestamp(self) -> int:
        self.pay("base")
        return self.context.block_timestamp

    def h_epoch_height(self) -> int:
        self.pay("base")
        return self.context.epoch_height

    def h_storage_usage(self) -> int:
        self.pay("base")
        return self.context.storage_usage

    def h_account_balance(self, ptr: int) -> None:
        self.pay("base")
        self.write_memory(ptr, self.context.account_balance.to_bytes(16, "little"))

    def h_account_locked_balance(self, ptr: int) -> None:
        self.pay("base")
        self.write_memory(ptr, self.context.account_locked_balance.to_bytes(16, "little"))

    def h_attached_deposit(self, ptr: int) -> None:
        self.pay("base")
        self.write_memory(ptr, bytes(16))  # a view attaches nothing

    def h_random_seed(self, register_id: int) -> None:
        self.pay("base")
        self.set_register(register_id, self.context.random_seed)

    # --- math ----------------------------------------------------------------------------------------
    def _digest(
        self, name: str, value_len: int, value_ptr: int, register_id: int, fn: Callable[[bytes], bytes]
    ) -> None:
        # the hash functions charge their own base, not `base` (logic.rs `sha256`, `keccak256`, ...)
        self.pay(f"{name}_base")
        value = self.memory_or_register(value_ptr, value_len)
        self.pay(f"{name}_byte", len(value))
        self.set_register(register_id, fn(value))

    def h_sha256(self, value_len: int, value_ptr: int, register_id: int) -> None:
        self._digest("sha256", value_len, value_ptr, register_id, lambda v: hashlib.sha256(v).digest())

    def h_keccak256(self, value_len: int, value_ptr: int, register_id: int) -> None:
        self._digest("keccak256", value_len, value_ptr, register_id, lambda v: keccak(v, 32))

    def h_keccak512(self, value_len: int, value_ptr: int, register_id: int) -> None:
        self._digest("keccak512", value_len, value_ptr, register_id, lambda v: keccak(v, 64))

    def h_ripemd160(self, value_len: int, value_ptr: int, register_id: int) -> None:
        self.pay("ripemd160_base")
        value = self.memory_or_register(value_ptr, value_len)
        self.pay("ripemd160_block", (len(value) + 8) // 64 + 1)  # 64-byte blocks after padding
        self.set_register(register_id, hashlib.new("ripemd160", value).digest())

    def h_ed25519_verify(
        self, sig_len: int, sig_ptr: int, msg_len: int, msg_ptr: int, pub_key_len: int, pub_key_ptr: int
    ) -> int:
        self.pay("ed25519_verify_base")
        signature = self.memory_or_register(sig_ptr, sig_len)
        if len(signature) != 64:
            raise Abort(errors.ed25519_invalid_input("invalid signature length"))
        if signature[63] & 0b1110_0000:
            return 0  # logic.rs keeps ed25519-dalek 1's early refusal of such a signature
        message = self.memory_or_register(msg_ptr, msg_len)
        self.pay("ed25519_verify_byte", len(message))
        public_key = self.memory_or_register(pub_key_ptr, pub_key_len)
        if len(public_key) != 32:
            raise Abort(errors.ed25519_invalid_input("invalid public key length"))
        try:
            Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        except (InvalidSignature, ValueError):
            return 0
        return 1

    def h_sha3_256(self, value_len: int, value_ptr: int, register_id: int) -> None:
        self._digest("sha3_256", value_len, value_ptr, register_id, lambda v: crypto.sha3(256, v))

    def h_sha3_384(self, value_len: int, value_ptr: int, register_id: int) -> None:
        self._digest("sha3_384", value_len, value_ptr, register_id, lambda v: crypto.sha3(384, v))

    def h_sha3_512(self, value_len: int, value_ptr: int, register_id: int) -> None:
        self._digest("sha3_512", value_len, value_ptr, register_id, lambda v: crypto.sha3(512, v))

    def h_ecrecover(
        self, hash_len: int, hash_ptr: int, sig_len: int, sig_ptr: int, v: int, malleability_flag: int, register_id: int
    ) -> int:
        # logic.rs `ecrecover`: the signature, then v, then the hash, then the flag are judged
        self.pay("ecrecover_base")
        signature = self.memory_or_register(sig_ptr, sig_len)
        if len(signature) != 64:
            raise Abort(
                errors.ecrecover_error(f"The length of the signature: {len(signature)}, exceeds the limit of 64 bytes")
            )
        if v >= 4:
            raise Abort(errors.ecrecover_error(f"V recovery byte 0 through 3 are valid but was provided {v}"))
        digest = self.memory_or_register(hash_ptr, hash_len)
        if len(digest) != 32:
            raise Abort(errors.ecrecover_error(f"The length of the hash: {len(digest)}, exceeds the limit of 32 bytes"))
        if malleability_flag not in (0, 1):
            raise Abort(
                errors.ecrecover_error(f"Malleability flag needs to be 0 or 1, but is instead {malleability_flag}")
            )
        if not crypto.secp256k1_signature_values_ok(signature, malleability_flag != 0):
            return 0
        public_key = crypto.secp256k1_recover(digest, signature, v)
        if public_key is None:
            return 0
        self.set_register(register_id, public_key)
        return 1

    def h_p256_verify(
        self, sig_len: int, sig_ptr: int, msg_len: int, msg_ptr: int, pub_key_len: int, pub_key_ptr: int
    ) -> int:
        # logic.rs `p256_verify` (its tests, p256_verify.rs, fix the order of reads and charges)
        self.pay("p256_verify_base")
        signature = self.memory_or_register(sig_ptr, sig_len)
        if len(signature) != 64:
            raise Abort(errors.p256_invalid_input("invalid signature length"))
        if not crypto.p256_signature_ok(signature):
            return 0
        message = self.memory_or_register(msg_ptr, msg_len)
        self.pay("p256_verify_byte", len(message))
        public_key = self.memory_or_register(pub_key_ptr, pub_key_len)
        if len(public_key) != 33:
            raise Abort(errors.p256_invalid_input("invalid public key length"))
        return int(crypto.p256_verify(signature, message, public_key))

    def h_ml_dsa_verify(
        self, sig_len: int, sig_ptr: int, msg_len: int, msg_ptr: int, pub_key_len: int, pub_key_ptr: int
    ) -> int:
        # logic.rs `ml_dsa_verify`, ML-DSA-65 (its tests, ml_dsa_verify.rs, fix the reads, charges and texts)
        self.pay("ml_dsa_verify_base")
        signature = self.memory_or_register(sig_ptr, sig_len)
        if len(signature) != crypto.ML_DSA_65_SIGNATURE_BYTES:
            raise Abort(
                errors.ml_dsa_invalid_input(
                    f"invalid signature length: expected the input of {crypto.ML_DSA_65_SIGNATURE_BYTES} bytes, "
                    f"but {len(signature)} was given"
                )
            )
        message = self.memory_or_register(msg_ptr, msg_len)
        self.pay("ml_dsa_verify_byte", len(message))
        public_key = self.memory_or_register(pub_key_ptr, pub_key_len)
        if len(public_key) != crypto.ML_DSA_65_PUBLIC_KEY_BYTES:
            raise Abort(
                errors.ml_dsa_invalid_input(
                    f"invalid key length: expected the input of {crypto.ML_DSA_65_PUBLIC_KEY_BYTES} bytes, "
                    f"but {len(public_key)} was given"
                )
            )
        return int(crypto.ml_dsa_65_verify(signature, message, public_key))

    def h_gas(self, opcodes: int) -> None:
        # logic.rs `gas_seen_from_wasm`: opcodes * regular_op_cost, no `base`
        try:
            self.gas.pay((opcodes & 0xFFFF_FFFF) * self.costs.regular_op_cost)  # a u32
        except GasExhausted:
            raise Abort(self.gas.exhausted_text) from None

    # --- chain and validators --------------------------------------------------------------------------
    def h_chain_id(self, register_id: int) -> None:
        self.pay("base")
        self.set_register(register_id, self.costs.chain_id.encode())

    def _stakes(self, name: str) -> Mapping[str, int]:
        stakes = None if self.context.validators is None else self.context.validators.stakes()
        if stakes is None:
            raise HostFunctionUnavailable(name)  # the store holds no validators for the epoch
        return stakes

    def h_validator_stake(self, account_id_len: int, account_id_ptr: int, stake_ptr: int) -> None:
        # logic.rs `validator_stake`: the account id read and parsed (read_and_parse_account_id),
        # then its stake in the block's epoch, zero for an account that is no validator
        self.pay("base")
        raw = self.memory_or_register(account_id_ptr, account_id_len)
        self.pay("utf8_decoding_base")
        self.pay("utf8_decoding_byte", len(raw))
        try:
            account_id = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Abort(errors.bad_utf8()) from None
        if not 2 <= len(account_id) <= 64 or _ACCOUNT_ID.fullmatch(account_id) is None:
            raise Abort(errors.host_error("InvalidAccountId"))
        self.pay("validator_stake_base")
        stake = self._stakes("validator_stake").get(account_id, 0)
        self.write_memory(stake_ptr, stake.to_bytes(16, "little"))

    def h_validator_total_stake(self, stake_ptr: int) -> None:
        self.pay("base")
        self.pay("validator_total_stake_base")
        total = sum(self._stakes("validator_total_stake").values())
        self.write_memory(stake_ptr, total.to_bytes(16, "little"))

    # --- miscellaneous ---------------------------------------------------------------------------------
    def h_value_return(self, value_len: int, value_ptr: int) -> None:
        self.pay("base")
        value = self.memory_or_register(value_ptr, value_len)
        if len(value) > self.costs.max_length_returned_data:
            raise Abort(errors.returned_value_length_exceeded(len(value), self.costs.max_length_returned_data))
        self._hold(len(self.returned or b""), len(value))
        self.returned = value

    def h_panic(self) -> None:
        self.pay("base")
        raise Abort(errors.guest_panic("explicit guest panic"))

    def h_panic_utf8(self, length: int, ptr: int) -> None:
        self.pay("base")
        raise Abort(errors.guest_panic(self.utf8_string(length, ptr)))

    def h_log_utf8(self, length: int, ptr: int) -> None:
        self.pay("base")
        self.check_can_log()
        message = self.utf8_string(length, ptr)
        self.pay("log_base")
        self.pay("log_byte", len(message.encode()))
        self.push_log(message)

    def h_log_utf16(self, length: int, ptr: int) -> None:
        self.pay("base")
        self.check_can_log()
        message = self.utf16_string(length, ptr)
        self.pay("log_base")
        self.pay("log_byte", len(message.encode()))  # the decoded string's (UTF-8) length
        self.push_log(message)

    def h_abort(self, msg_ptr: int, filename_ptr: int, line: int, col: int) -> None:
        # AssemblyScript's abort: each string is UTF-16 preceded by its byte length (u32)
        self.pay("base")
        if msg_ptr < 4 or filename_ptr < 4:
            raise Abort(errors.bad_utf16())
        self.check_can_log()
        msg_len = int.from_bytes(self.read_memory(msg_ptr - 4, 4), "little")
        filename_len = int.from_bytes(self.read_memory(filename_ptr - 4, 4), "little")
        msg = self.utf16_string(msg_len, msg_ptr)
        filename = self.utf16_string(filename_len, filename_ptr)
        message = f'{msg}, filename: "{filename}" line: {line} col: {col}'
        self.pay("log_base")
        self.pay("log_byte", len(message.encode()))
        self.push_log(f"ABORT: {message}")
        raise Abort(errors.guest_panic(message))

    # --- storage -----------------------------------------------------------------------------------------
    def _key(self, key_len: int, key_ptr: int, byte_cost: str) -> bytes:
        key = self.memory_or_register(key_ptr, key_len)
        if len(key) > self.costs.max_length_storage_key:
            raise Abort(errors.key_length_exceeded(len(key), self.costs.max_length_storage_key))
        self.pay(byte_cost, len(key))
        return key

    def h_storage_read(self, key_len: int, key_ptr: int, register_id: int) -> int:
        # as _key, with base, storage_read_base and the key's read from memory one charge
        # (GasExhausted: the crossing's Abort)
        gas = self.gas
        if self.profiled:
            return self._storage_read_named(key_len, key_ptr, register_id)
        if key_len == U64_MAX:
            gas.pay(self._storage_read_fixed)
            key = self.read_register(key_ptr)
        else:
            gas.pay(self._storage_read_fixed + self._read_memory_base + self._read_memory_byte * key_len)
            memory = self.memory
            if not memory.holds(key_ptr + key_len):
                raise Abort(errors.memory_access_violation())
            key = memory.read(key_ptr, key_ptr + key_len)
        if len(key) > self.costs.max_length_storage_key:
            raise Abort(errors.key_length_exceeded(len(key), self.costs.max_length_storage_key))
        gas.pay(self._storage_read_key_byte * len(key))
        value = self._stored(key)
        if value is None:
            return 0
        charge = self._storage_read_value_byte * len(value)
        if len(value) > INLINE_DISK_VALUE_THRESHOLD:
            ext = self._ext
            charge += ext.get("storage_large_read_overhead_base", 0)
            charge += ext.get("storage_large_read_overhead_byte", 0) * len(value)
        gas.pay(charge)
        self.set_register(register_id, value)
        return 1

    def _storage_read_named(self, key_len: int, key_ptr: int, register_id: int) -> int:
        """h_storage_read charging each ext cost by name, in logic.rs `storage_read`'s order, for
        a call's profile. No trie node is charged: nearcore reads through flat storage, which
        tracks none (see call.py)."""
        self.pay("base")
        self.pay("storage_read_base")
        key = self.memory_or_register(key_ptr, key_len)
        if len(key) > self.costs.max_length_storage_key:
            raise Abort(errors.key_length_exceeded(len(key), self.costs.max_length_storage_key))
        self.pay("storage_read_key_byte", len(key))
        value = self._stored(key)
        if value is None:
            return 0
        self.pay("storage_read_value_byte", len(value))
        if len(value) > INLINE_DISK_VALUE_THRESHOLD:
            self.pay("storage_large_read_overhead_base")
            self.pay("storage_large_read_overhead_byte", len(value))
        self.value_read(key)
        self.set_register(register_id, value)
        return 1

    def value_read(self, key: bytes) -> None:
        """A value storage_read paid for (a call's trie accounting notes it: call.py)."""

    def h_storage_has_key(self, key_len: int, key_ptr: int) -> int:
        self.pay("base")
        self.pay("storage_has_key_base")
        key = self._key(key_len, key_ptr, "storage_has_key_byte")
        return 0 if self._stored(key) is None else 1

    def _stored(self, key: bytes) -> bytes | None:
        """The key's value as of the block, from the state once per call (up to READS_KEPT_BYTES
        of keys and values kept; past it the state is asked again). Gas is the host function's
        alone: it pays for every read, kept or not."""
        if key in self._read:
            return self._read[key]
        value = self.state.storage_read(key)
        size = len(key) + (0 if value is None else len(value))
        if self._read_bytes + size <= READS_KEPT_BYTES:
            self._read[key] = value
            self._read_bytes += size
        return value


I64, I32 = "i64", "i32"


@dataclass(frozen=True)
class HostFunction:
    name: str
    params: tuple[str, ...]
    results: tuple[str, ...]
    # what a call does: the logic's method, or None for "fails with `failure` after base"
    method: Callable[..., int | None] | None = None
    failure: str | None = None
    unavailable: bool = False
    # ext costs paid before `failure` (logic.rs: `base` first, and promise_return also its own)
    paid: tuple[str, ...] = ("base",)


def _fn(name: str, params: int, results: int = 0, *, kind: str = I64) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (kind,) * params, (I64,) * results


def _implemented(method: Callable[..., int | None], params: int, results: int = 0) -> HostFunction:
    name = method.__name__.removeprefix("h_")
    p, r = _fn(name, params, results)
    return HostFunction(name, p, r, method=method)


def _prohibited(
    name: str, params: int, results: int = 0, shown_as: str | None = None, paid: tuple[str, ...] = ("base",)
) -> HostFunction:
    p, r = _fn(name, params, results)
    return HostFunction(name, p, r, failure=errors.prohibited_in_view(shown_as or name), paid=paid)


def _deprecated(name: str, params: int, results: int) -> HostFunction:
    # logic.rs: the storage_iter_* functions fail at once, charging nothing
    p, r = _fn(name, params, results)
    return HostFunction(name, p, r, failure=errors.deprecated(name), paid=())


def _unavailable(name: str, params: int, results: int = 0) -> HostFunction:
    p, r = _fn(name, params, results)
    return HostFunction(name, p, r, unavailable=True)


# nearcore's `env` imports (near-vm-runner src/imports.rs `imports!`), with their signatures
HOST_FUNCTIONS: tuple[HostFunction, ...] = (
    _implemented(ViewLogic.h_read_register, 2),
    _implemented(ViewLogic.h_register_len, 1, 1),
    _implemented(ViewLogic.h_write_register, 3),
    _implemented(ViewLogic.h_current_account_id, 1),
    _prohibited("signer_account_id", 1),
    _prohibited("signer_account_pk", 1),
    _prohibited("predecessor_account_id", 1),
    _implemented(ViewLogic.h_input, 1),
    _implemented(ViewLogic.h_block_index, 0, 1),
    _implemented(ViewLogic.h_block_timestamp, 0, 1),
    _implemented(ViewLogic.h_epoch_height, 0, 1),
    _implemented(ViewLogic.h_storage_usage, 0, 1),
    _implemented(ViewLogic.h_account_balance, 1),
    _implemented(ViewLogic.h_account_locked_balance, 1),
    _implemented(ViewLogic.h_attached_deposit, 1),
    _prohibited("prepaid_gas", 0, 1),
    _prohibited("used_gas", 0, 1),
    _implemented(ViewLogic.h_random_seed, 1),
    _implemented(ViewLogic.h_sha256, 3),
    _implemented(ViewLogic.h_keccak256, 3),
    _implemented(ViewLogic.h_keccak512, 3),
    _implemented(ViewLogic.h_ed25519_verify, 6, 1),
    _implemented(ViewLogic.h_ripemd160, 3),
    _implemented(ViewLogic.h_ecrecover, 7, 1),
    _implemented(ViewLogic.h_p256_verify, 6, 1),
    _implemented(ViewLogic.h_ml_dsa_verify, 6, 1),
    _implemented(ViewLogic.h_sha3_256, 3),
    _implemented(ViewLogic.h_sha3_384, 3),
    _implemented(ViewLogic.h_sha3_512, 3),
    _implemented(ViewLogic.h_chain_id, 1),
    _implemented(ViewLogic.h_value_return, 2),
    _implemented(ViewLogic.h_panic, 0),
    _implemented(ViewLogic.h_panic_utf8, 2),
    _implemented(ViewLogic.h_log_utf8, 2),
    _implemented(ViewLogic.h_log_utf16, 2),
    HostFunction("abort", (I32,) * 4, (), method=ViewLogic.h_abort),
    _prohibited("promise_create", 8, 1, shown_as="promise_batch_create"),
    _prohibited("promise_then", 9, 1, shown_as="promise_batch_then"),
    _prohibited("promise_and", 2, 1),
    _prohibited("promise_batch_create", 2, 1),
    _prohibited("promise_batch_then", 3, 1),
    _prohibited("promise_batch_action_create_account", 1),
    _prohibited("promise_batch_action_deploy_contract", 3),
    _prohibited("promise_batch_action_function_call", 7),
    _prohibited("promise_batch_action_function_call_weight", 8, shown_as="promise_batch_action_function_call"),
    _prohibited("promise_batch_action_transfer", 2),
    _prohibited("promise_batch_action_stake", 4),
    _prohibited("promise_batch_action_add_key_with_full_access", 4),
    _prohibited("promise_batch_action_add_key_with_function_call", 9),
    _prohibited("promise_batch_action_delete_key", 3),
    _prohibited("promise_batch_action_delete_account", 3),
    _prohibited("promise_batch_action_deploy_global_contract", 3),
    _prohibited("promise_batch_action_deploy_global_contract_by_account_id", 3),
    _prohibited("promise_batch_action_use_global_contract", 3),
    _prohibited("promise_batch_action_use_global_contract_by_account_id", 3),
    _prohibited("promise_yield_create", 7, 1),
    # returns a u32; its view check names the function's former name (logic.rs)
    HostFunction("promise_yield_resume", (I64,) * 4, (I32,), failure=errors.prohibited_in_view("promise_submit_data")),
    _prohibited("promise_results_count", 0, 1),
    _prohibited("promise_result", 2, 1),
    _prohibited("promise_return", 1, paid=("base", "promise_return")),
    _prohibited("storage_write", 5, 1),
    _implemented(ViewLogic.h_storage_read, 3, 1),
    _prohibited("storage_remove", 3, 1),
    _implemented(ViewLogic.h_storage_has_key, 2, 1),
    # newer functions, each refused in a view after `base` (logic.rs; signatures from imports.rs)
    _prohibited("refund_to_account_id", 1),
    _prohibited("promise_set_refund_to", 3),
    _prohibited("promise_batch_action_state_init", 4, 1),
    _prohibited("promise_batch_action_state_init_by_account_id", 4, 1),
    _prohibited("set_state_init_data_entry", 6),
    _prohibited("promise_yield_create_with_id", 9, 1),
    HostFunction(
        "promise_yield_resume_with_yield_id",
        (I64,) * 4,
        (I32,),
        failure=errors.prohibited_in_view("promise_yield_resume_with_yield_id"),
    ),
    _prohibited("promise_batch_action_transfer_to_gas_key", 4),
    _prohibited("promise_batch_action_add_gas_key_with_full_access", 4),
    _prohibited("promise_batch_action_add_gas_key_with_function_call", 9),
    # the gas meter's old entry point, still importable: burns `opcodes` regular operations
    HostFunction("gas", (I32,), (), method=ViewLogic.h_gas),
    _deprecated("storage_iter_prefix", 2, 1),
    _deprecated("storage_iter_range", 4, 1),
    _deprecated("storage_iter_next", 3, 1),
    _implemented(ViewLogic.h_validator_stake, 3),
    _implemented(ViewLogic.h_validator_total_stake, 1),
    _unavailable("alt_bn128_g1_multiexp", 3),
    _unavailable("alt_bn128_g1_sum", 3),
    _unavailable("alt_bn128_pairing_check", 2, 1),
    _unavailable("bls12381_p1_sum", 3, 1),
    _unavailable("bls12381_p2_sum", 3, 1),
    _unavailable("bls12381_g1_multiexp", 3, 1),
    _unavailable("bls12381_g2_multiexp", 3, 1),
    _unavailable("bls12381_map_fp_to_g1", 3, 1),
    _unavailable("bls12381_map_fp2_to_g2", 3, 1),
    _unavailable("bls12381_pairing_check", 2, 1),
    _unavailable("bls12381_p1_decompress", 3, 1),
    _unavailable("bls12381_p2_decompress", 3, 1),
)

# the host functions a protocol offers only with one of its wasm_config flags on (near-vm-runner
# imports.rs: the `#[flag]` of an entry; runtime_configs 85.yaml and 87.yaml turn them on)
REQUIRES_FLAG: dict[str, str] = {
    "chain_id": "chain_id_host_fn",
    "p256_verify": "p256_verify_host_fn",
    "ml_dsa_verify": "ml_dsa_verify_host_fn",
    "sha3_256": "sha3_host_fns",
    "sha3_384": "sha3_host_fns",
    "sha3_512": "sha3_host_fns",
    "promise_batch_action_deploy_global_contract": "global_contract_host_fns",
    "promise_batch_action_deploy_global_contract_by_account_id": "global_contract_host_fns",
    "promise_batch_action_use_global_contract": "global_contract_host_fns",
    "promise_batch_action_use_global_contract_by_account_id": "global_contract_host_fns",
    "promise_yield_create_with_id": "yield_with_id_host_fns",
    "promise_yield_resume_with_yield_id": "yield_with_id_host_fns",
    "promise_batch_action_transfer_to_gas_key": "gas_key_host_fns",
    "promise_batch_action_add_gas_key_with_full_access": "gas_key_host_fns",
    "promise_batch_action_add_gas_key_with_function_call": "gas_key_host_fns",
}
_ALWAYS = frozenset(fn.name for fn in HOST_FUNCTIONS if fn.name not in REQUIRES_FLAG)


def available_host_functions(flags: frozenset[str]) -> frozenset[str]:
    """The `env` functions a protocol whose wasm_config has `flags` on links."""
    return _ALWAYS | {name for name, flag in REQUIRES_FLAG.items() if flag in flags}


PROHIBITED_IN_VIEW = tuple(fn.name for fn in HOST_FUNCTIONS if fn.failure and "ProhibitedInView" in fn.failure)
