"""The bounded base58 decoder against the pure-Python `base58` package (the oracle), and the
errors nearcore's bs58 gives for a text too long for its buffer, wherever its fault lies."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import base58
import pytest

from nearrpc.nearcore.base58 import HASH_CHARS, Base58Error, BufferTooSmall, decode_capped, decode_onto
from nearrpc.nearcore.public_key import PublicKeyError, canonical_public_key

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _texts() -> list[str]:
    rng = random.Random(58)
    texts = [base58.b58encode(bytes(zeros) + rng.randbytes(n)).decode() for n in range(70) for zeros in (0, 1, 3)]
    texts += ["".join(rng.choice(ALPHABET) for _ in range(length)) for length in range(40, 95) for _ in range(5)]
    return [*texts, "", "1" * 32, "1" * 33, "1" * 64, "1" * 65, "z" * 44, "z" * 45]


@pytest.mark.parametrize("size", [32, 64])
def test_decoding_onto_a_buffer_agrees_with_the_oracle(size: int) -> None:
    for text in _texts():
        expected = base58.b58decode(text)
        if len(expected) > size:
            with pytest.raises(BufferTooSmall):
                decode_onto(text, size)
        else:
            assert decode_onto(text, size) == expected, text
        assert decode_capped(text, 1000) == expected


def test_no_text_longer_than_44_characters_is_a_32_byte_hash() -> None:
    assert len(base58.b58encode(b"\xff" * 32)) == HASH_CHARS
    for text in ("z" * 45, "1" * 45, "2" + "1" * 44, "1" * 12 + "z" * 33):
        with pytest.raises(BufferTooSmall):
            decode_onto(text, 32)


@pytest.mark.parametrize("length", [200_000, 5_000_000])
def test_a_long_text_fails_as_bs58_fails_onto_a_key_buffer(length: int) -> None:
    """bs58 stops at the first fault in its order: a character that is no base58 before the
    buffer overflows, else the overflow; leading 1s (zero bytes) overflow only at the end.
    nearcore reports an overflow as one byte more than the key holds."""
    overflow = "invalid key length: expected the input of 32 bytes, but 33 was given"
    cases = {
        "z" * length: overflow,
        "2" + "1" * length: overflow,
        "z" * 50 + "!" + "z" * length: overflow,  # the overflow comes first
        "1" * length: overflow,
        "1" * length + "!": f"invalid key data: provided string contained invalid character '!' at byte {length}",
        "z!" + "z" * length: "invalid key data: provided string contained invalid character '!' at byte 1",
    }
    for data, message in cases.items():
        with pytest.raises(PublicKeyError) as refused:
            canonical_public_key("ed25519:" + data)
        assert str(refused.value) == message
    with pytest.raises(PublicKeyError, match="expected the input of 64 bytes, but 65 was given"):
        canonical_public_key("secp256k1:" + "z" * length)


def _answer(decode: Callable[[str, int], bytes], text: str, size: int) -> object:
    try:
        return decode(text, size)
    except Base58Error as fault:
        return (type(fault), str(fault))


def test_capped_decoding_meets_the_fault_bs58_meets_first() -> None:
    """decode_capped answers what decode_onto (bs58's order) answers: an overflow or the first
    character that is no base58, leading 1s counted as bytes only at the end."""
    rng = random.Random(34)
    for _ in range(4000):
        size = rng.randint(0, 40)
        noisy = rng.random() < 0.3
        text = "".join(rng.choice(ALPHABET + "0OIl!é" if noisy else ALPHABET) for _ in range(rng.randint(0, 80)))
        if rng.random() < 0.3:
            text = "1" * rng.randint(0, 30) + text
        assert _answer(decode_capped, text, size) == _answer(decode_onto, text, size), (text, size)


def test_capped_decoding_reads_no_more_than_could_fit() -> None:
    """10 MB of digits onto 10 KiB: refused within a few milliseconds, as a short overflow is."""
    for text in ("z" * 10_000_000, "z" * 20_000 + "!", "1" * 20_000 + "z" * 10_000_000):
        started = time.perf_counter()
        with pytest.raises(BufferTooSmall):
            decode_capped(text, 10_240)
        assert time.perf_counter() - started < 0.5
    with pytest.raises(Base58Error, match="invalid character '0' at byte 2"):
        decode_capped("zz0" + "z" * 10_000_000, 10_240)


def test_the_digit_that_first_needs_one_byte_more_is_the_overflow() -> None:
    """bs58 fails at the digit whose value no longer fits the buffer, 2**256 included (exactly
    one byte too many), before it reads the next character."""
    exactly_too_big = base58.b58encode((1 << 256).to_bytes(33, "big")).decode()
    with pytest.raises(BufferTooSmall):
        decode_onto(exactly_too_big + "!", 32)
    with pytest.raises(PublicKeyError, match="expected the input of 32 bytes, but 33 was given"):
        canonical_public_key("ed25519:" + exactly_too_big + "!")
    largest = base58.b58encode(b"\xff" * 32).decode()
    with pytest.raises(Base58Error, match="invalid character '!' at byte 44"):
        decode_onto(largest + "!", 32)


def test_the_native_fast_path_answers_as_the_digit_by_digit_decoder() -> None:
    """Short texts go to the native decoder first; whatever it answers, the result or the error
    (its kind and bs58's text) is the one the digit-by-digit decoder gives."""
    from nearrpc.nearcore.base58 import _decode_onto_exactly

    rng = random.Random(5858)
    odd = ALPHABET + "0OIl!é "
    texts = _texts() + ["".join(rng.choice(odd) for _ in range(rng.randrange(1, 90))) for _ in range(2000)]
    for size in (32, 33, 64):
        for text in texts:
            try:
                expected: bytes | Base58Error = _decode_onto_exactly(text, size)
            except Base58Error as error:
                expected = error
            try:
                got: bytes | Base58Error = decode_onto(text, size)
            except Base58Error as error:
                got = error
            if isinstance(expected, Base58Error):
                assert type(got) is type(expected) and str(got) == str(expected), text
            else:
                assert got == expected, text
