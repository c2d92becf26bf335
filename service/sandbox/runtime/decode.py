"""A signed transaction's borsh bytes (or their base64 text) read into `model.SignedTransaction`.

What nearcore answers (chain/jsonrpc/src/api/transactions.rs, `decode_signed_transaction`, used
by `send_tx`, `broadcast_tx_async`, `broadcast_tx_commit` and the signed-transaction form of
`EXPERIMENTAL_tx_status`): a base64 text that does not decode, or bytes that are no borsh
`SignedTransaction` (`SignedTransaction::try_from_slice`, which also refuses trailing bytes), is
an `RpcParseError` whose text is "Failed to decode transaction: " followed by the base64 or borsh
error's Display text. The JSON-RPC layer answers it as every parse error: the REQUEST_VALIDATION_ERROR
kind, cause PARSE_ERROR, code -32700, message "Parse error", `data` and `cause.info.error_message`
that text (nearrpc: `methods.errors.parse_error(error.rpc_text)`). `TransactionDecodeError.rpc_text`
is that text; its `detail` the part after the prefix, worded as the Rust crates word it (borsh:
"Unexpected length of input", "Not all bytes read", "Unexpected variant tag: 12", ...; base64:
"Invalid symbol 33, offset 0.", "Invalid padding", ...).

`UnsupportedTransaction` (a TransactionDecodeError, with the same prefix) is the sandbox's own
refusal of what nearcore decodes but this runtime does not execute: `Transaction::V1` (gas-key
nonces and nonce modes, protocol 85's gas keys), the actions the model lacks (global contracts,
deterministic state init, gas-key transfers, DelegateV2), gas-key permissions and ML-DSA-65 keys.
The methods layer may answer it like a parse error; its text says what is missing.

Bounds: the base64 text is refused past `MAX_BASE64_CHARS` (the JSON-RPC body limit, 10 MiB,
so nothing a request can carry is cut short) before any decoding; every length read from the bytes
is compared with what remains before anything is allocated, so work and memory follow the input's
size, never a length it claims.

Versions (core/primitives/src/transaction.rs, `BorshDeserialize for Transaction`, nearcore 2.13+):
`Transaction::V0` has no tag, its first field is the signer id's u32 length (at most 64, so its
second byte is 0); `V1` starts with the byte 1 and a second byte that is not 0; anything else is
"invalid transaction version tag". The transaction's hash is SHA-256 of its borsh bytes (what the
signature covers); `size` is the whole signed transaction's length, what `max_transaction_size`
limits from protocol 85 (`SignedTransaction::size_for_limits`, the wire size with the signature;
before 85 the limit counts the transaction alone: `verifier.size_for_limits`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Final

import based58

from nearrpc.nearcore.account_id import account_id_problem
from nearrpc.sandbox.runtime import model

# The JSON-RPC body limit: a base64 text longer than this cannot arrive in a request.
MAX_BASE64_CHARS: Final = 10 * 1024 * 1024
_RPC_PREFIX: Final = "Failed to decode transaction: "

# core/crypto KeyType: (name, public key length, signature length); 2 is ML-DSA-65, refused.
_KEY_TYPES: Final = {0: ("ed25519", 32, 64), 1: ("secp256k1", 64, 65)}
_MLDSA65_KEY_TYPE: Final = 2
# core/primitives/src/action/mod.rs `Action` discriminants; the variants this runtime lacks.
_DELEGATE_TAG: Final = 8
_UNSUPPORTED_ACTIONS: Final = {
    9: "DeployGlobalContract",
    10: "UseGlobalContract",
    11: "DeterministicStateInit",
    12: "TransferToGasKey",
    13: "WithdrawFromGasKey",
    14: "DelegateV2",
}
# AccessKeyPermission: 0 FunctionCall, 1 FullAccess; 2 and 3 are the gas keys' permissions.
_UNSUPPORTED_PERMISSIONS: Final = {2: "GasKeyFunctionCall", 3: "GasKeyFullAccess"}

_NOT_BASE64: Final = re.compile(rb"[^A-Za-z0-9+/]")


class TransactionDecodeError(model.TransactionUndecodable, ValueError):
    """Bytes or text that are no signed transaction; `detail` is the decoder's words (the
    writing methods answer it as nearcore's PARSE_ERROR, model.TransactionUndecodable)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    @property
    def rpc_text(self) -> str:
        """nearcore's RpcParseError text for it."""
        return _RPC_PREFIX + self.detail


class UnsupportedTransaction(TransactionDecodeError):
    """A transaction nearcore would decode, carrying what this runtime does not execute."""


def _eof() -> TransactionDecodeError:
    return TransactionDecodeError("Unexpected length of input")


def decode_base64(text: str) -> bytes:
    """`text` as nearcore's `from_base64` decodes it (the base64 crate's STANDARD engine:
    standard alphabet, canonical padding, no stray bits), or TransactionDecodeError."""
    if len(text) > MAX_BASE64_CHARS:
        raise TransactionDecodeError(f"Invalid input length: {len(text)}")
    raw = text.encode("utf-8", "surrogatepass")
    body = raw.rstrip(b"=")
    padding = len(raw) - len(body)
    stray = _NOT_BASE64.search(body)
    if stray is not None:
        raise TransactionDecodeError(f"Invalid symbol {body[stray.start()]}, offset {stray.start()}.")
    if len(body) % 4 == 1:
        raise TransactionDecodeError(f"Invalid input length: {len(raw)}")
    if padding > 2 or (len(body) + padding) % 4 != 0:
        raise TransactionDecodeError("Invalid padding")
    try:
        decoded = binascii.a2b_base64(raw, strict_mode=True)
    except binascii.Error as problem:  # a case the checks above missed: never silently accepted
        raise TransactionDecodeError(str(problem)) from None
    if base64.b64encode(decoded) != raw:  # bits past the last byte must be zero
        last = len(body) - 1
        raise TransactionDecodeError(f"Invalid last symbol {body[last]}, offset {last}.")
    return decoded


class _Reader:
    """Borsh reads over `data`, each checked against what remains."""

    __slots__ = ("data", "position")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def take(self, size: int) -> bytes:
        end = self.position + size
        if end > len(self.data):
            raise _eof()
        chunk = self.data[self.position : end]
        self.position = end
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u32(self) -> int:
        return int.from_bytes(self.take(4), "little")

    def u64(self) -> int:
        return int.from_bytes(self.take(8), "little")

    def u128(self) -> int:
        return int.from_bytes(self.take(16), "little")

    def length(self, minimum_item_size: int = 1) -> int:
        """A Vec's or string's u32 length, refused at once when its items cannot fit."""
        count = self.u32()
        if count * minimum_item_size > len(self.data) - self.position:
            raise _eof()
        return count

    def blob(self) -> bytes:
        return self.take(self.length())

    def string(self) -> str:
        return _utf8(self.blob())

    def account_id(self) -> str:
        # near-account-id's BorshDeserialize: the string, then its validation.
        text = self.string()
        problem = account_id_problem(text)
        if problem is not None:
            raise TransactionDecodeError(f'invalid value: "{text}", {problem}')
        return text

    def key_type(self) -> tuple[str, int, int]:
        tag = self.u8()
        if tag == _MLDSA65_KEY_TYPE:
            raise UnsupportedTransaction("the sandbox does not support ML-DSA-65 keys")
        if tag not in _KEY_TYPES:
            raise TransactionDecodeError(f"unknown key type '{tag}'")
        return _KEY_TYPES[tag]

    def public_key(self) -> str:
        name, key_length, _ = self.key_type()
        return f"{name}:{_b58(self.take(key_length))}"

    def signature(self) -> str:
        name, _, signature_length = self.key_type()
        return f"{name}:{_b58(self.take(signature_length))}"

    def crypto_hash(self) -> str:
        return _b58(self.take(32))


def _b58(data: bytes) -> str:
    return based58.b58encode(data).decode("ascii")


def _utf8(data: bytes) -> str:
    """Rust's String::from_utf8, with its error's words."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        if problem.reason == "unexpected end of data":
            raise TransactionDecodeError(f"incomplete utf-8 byte sequence from index {problem.start}") from None
        size = problem.end - problem.start
        raise TransactionDecodeError(f"invalid utf-8 sequence of {size} bytes from index {problem.start}") from None


def _option_u128(reader: _Reader) -> int | None:
    flag = reader.u8()
    if flag == 0:
        return None
    if flag == 1:
        return reader.u128()
    raise TransactionDecodeError(f"Invalid Option representation: {flag}. The first byte must be 0 or 1")


def _access_key(reader: _Reader) -> model.AccessKey:
    nonce = reader.u64()
    tag = reader.u8()
    if tag == 1:
        return model.AccessKey(nonce=nonce, permission=None)
    if tag in _UNSUPPORTED_PERMISSIONS:
        raise UnsupportedTransaction(f"the sandbox does not support {_UNSUPPORTED_PERMISSIONS[tag]} access keys")
    if tag != 0:
        raise TransactionDecodeError(f"Unexpected variant tag: {tag}")
    allowance = _option_u128(reader)
    receiver_id = reader.string()  # FunctionCallPermission's receiver is a plain String
    method_names = tuple(reader.string() for _ in range(reader.length(4)))
    permission = model.FunctionCallPermission(allowance=allowance, receiver_id=receiver_id, method_names=method_names)
    return model.AccessKey(nonce=nonce, permission=permission)


def _non_delegate_action(reader: _Reader, tag: int) -> model.NonDelegateAction:
    match tag:
        case 0:
            return model.CreateAccount()
        case 1:
            return model.DeployContract(code=reader.blob())
        case 2:
            method_name = reader.string()
            args = reader.blob()
            return model.FunctionCall(method_name=method_name, args=args, gas=reader.u64(), deposit=reader.u128())
        case 3:
            return model.Transfer(deposit=reader.u128())
        case 4:
            stake = reader.u128()
            return model.Stake(stake=stake, public_key=reader.public_key())
        case 5:
            public_key = reader.public_key()
            return model.AddKey(public_key=public_key, access_key=_access_key(reader))
        case 6:
            return model.DeleteKey(public_key=reader.public_key())
        case 7:
            return model.DeleteAccount(beneficiary_id=reader.account_id())
    if tag in _UNSUPPORTED_ACTIONS:
        raise UnsupportedTransaction(f"the sandbox does not execute {_UNSUPPORTED_ACTIONS[tag]} actions")
    raise TransactionDecodeError(f"Unexpected variant tag: {tag}")


def _action(reader: _Reader) -> model.Action:
    tag = reader.u8()
    return _delegate(reader) if tag == _DELEGATE_TAG else _non_delegate_action(reader, tag)


def _inner_action(reader: _Reader) -> model.NonDelegateAction:
    tag = reader.u8()
    if tag == _DELEGATE_TAG:
        # action/delegate.rs, `BorshDeserialize for NonDelegateAction`
        raise TransactionDecodeError("DelegateAction mustn't contain a nested one")
    return _non_delegate_action(reader, tag)


def _delegate(reader: _Reader) -> model.Delegate:
    sender_id = reader.account_id()
    receiver_id = reader.account_id()
    actions = tuple(_inner_action(reader) for _ in range(reader.length()))
    nonce = reader.u64()
    max_block_height = reader.u64()
    public_key = reader.public_key()
    inner = model.DelegateAction(
        sender_id=sender_id,
        receiver_id=receiver_id,
        actions=actions,
        nonce=nonce,
        max_block_height=max_block_height,
        public_key=public_key,
    )
    return model.Delegate(delegate_action=inner, signature=reader.signature())


def _transaction(reader: _Reader) -> model.Transaction:
    # transaction.rs `BorshDeserialize for Transaction`: the second byte tells the versions apart
    first, second = reader.take(2)
    if second != 0 and first == 1:
        raise UnsupportedTransaction("the sandbox does not accept Transaction::V1 (gas key nonces)")
    if second != 0:
        raise TransactionDecodeError(f"invalid transaction version tag: {first}")
    reader.position -= 2  # V0: both bytes belong to the signer id's length
    signer_id = reader.account_id()
    public_key = reader.public_key()
    nonce = reader.u64()
    receiver_id = reader.account_id()
    block_hash = reader.crypto_hash()
    actions = tuple(_action(reader) for _ in range(reader.length()))
    return model.Transaction(
        signer_id=signer_id,
        public_key=public_key,
        nonce=nonce,
        receiver_id=receiver_id,
        block_hash=block_hash,
        actions=actions,
    )


def decode_signed_transaction(data: bytes) -> model.SignedTransaction:
    """The borsh bytes of a `SignedTransaction` read as nearcore reads them, or
    TransactionDecodeError (UnsupportedTransaction for what the sandbox does not execute)."""
    reader = _Reader(data)
    transaction = _transaction(reader)
    transaction_bytes = data[: reader.position]
    signature = reader.signature()
    if reader.position != len(data):
        raise TransactionDecodeError("Not all bytes read")
    return model.SignedTransaction(
        transaction=transaction,
        signature=signature,
        hash=_b58(hashlib.sha256(transaction_bytes).digest()),
        size=len(data),
    )


def decode_signed_transaction_base64(text: str) -> model.SignedTransaction:
    """`signed_tx_base64` (or a broadcast's `[base64]`) read into a signed transaction."""
    return decode_signed_transaction(decode_base64(text))
