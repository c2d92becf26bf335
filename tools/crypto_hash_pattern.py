"""The exact regular expression of a CryptoHash: base58 text that decodes to exactly 32 bytes.

    python -m tools.crypto_hash_pattern      # print it

nearcore (and the server) decode a hash with the Bitcoin base58 alphabet and refuse any text
whose decoding is not 32 bytes long. Base58 keeps leading zero bytes as leading "1"s, so such
a text is `"1" * k + digits` where `digits` (no leading "1") is the base58 spelling of a number
N whose big-endian form has exactly m = 32 - k bytes, i.e. 256**(m-1) <= N < 256**m, for
k = 0..32 (k = 32 is "1" * 32, N = 0). A base58 digit is worth log2(58) ~ 5.86 bits, so each
of those ranges spans one or two digit counts, and inside one digit count a number range is a
range of equally long strings, which a regular expression states digit by digit: for the
lower bound "the same first digits, then a greater one, then anything", and the mirror image
for the upper bound (nested one group per _CHUNK digits, not per digit, so Rust's regex
parser, which allows 250 nested groups, reads the 88 digits of 64 bytes too). Every bound is
spelled out in full because a text one unit below 256**(m-1) has the same length and nearly
the same digits, yet decodes to m - 1 bytes.

The result (about 60 kB) uses only what ECMA-262, Python `re`, Rust `regex` and Hypothesis
share: literals, character classes, non-capturing groups, alternation and counted repeats.
`spec_sync` applies it through the overlay `wire-crypto-hash-exact` (`value_from`), and
tests/spec/test_crypto_hash_pattern.py holds it to the decoder on random and boundary texts.
`public_key_pattern` builds the key texts the same way: ed25519 (32 bytes) or secp256k1 (64
bytes; nearcore's parser refuses a key of another length).
"""

from __future__ import annotations

from typing import Final

import base58

ALPHABET: Final = base58.BITCOIN_ALPHABET.decode("ascii")
HASH_BYTES: Final = 32
ED25519_KEY_BYTES: Final = 32
SECP256K1_KEY_BYTES: Final = 64
SECP256K1_MOST_LEADING_ZEROS: Final = 4  # see public_key_pattern
# the alphabet as the ASCII runs it is made of (it skips 0, I, O and l)
_RUNS: Final = (("1", "9"), ("A", "H"), ("J", "N"), ("P", "Z"), ("a", "k"), ("m", "z"))
_ZERO, _TOP = ALPHABET[0], ALPHABET[-1]
# A bound is spelled a few digits at a time: nesting one group per digit would pass the 250
# nested groups Rust's regex parser (pydantic's engine) allows, for the 88 digits of 64 bytes.
_CHUNK: Final = 4


def _digit_class(low: int, high: int) -> str:
    """A regex matching one base58 digit whose value lies in [low, high] ("" if none)."""
    if low > high:
        return ""
    first, last = ALPHABET[low], ALPHABET[high]
    if low == high:
        return first
    pieces = []
    for run_first, run_last in _RUNS:
        start, end = max(run_first, first), min(run_last, last)
        if start == end:
            pieces.append(start)
        elif start < end:
            pieces.append(f"{start}{end}" if ord(end) - ord(start) == 1 else f"{start}-{end}")
    return "[" + "".join(pieces) + "]"


ANY_DIGIT: Final = _digit_class(0, len(ALPHABET) - 1)


def _any(count: int) -> str:
    if count == 0:
        return ""
    return ANY_DIGIT if count == 1 else f"{ANY_DIGIT}{{{count}}}"


def _either(*choices: str) -> str:
    """Alternation of the non-empty choices, grouped when there is more than one."""
    kept = [choice for choice in choices if choice]
    return kept[0] if len(kept) == 1 else "(?:" + "|".join(kept) + ")"


def _branch(digit_class: str, rest: int) -> str:
    return digit_class + _any(rest) if digit_class else ""


def _at_least(bound: str) -> str:
    """Strings of len(bound) digits whose value is >= bound's."""
    if bound.strip(_ZERO) == "":
        return _any(len(bound))
    head, rest = bound[:_CHUNK], bound[_CHUNK:]
    # greater at the first digit that differs, within the head (flat, one choice per digit) ...
    greater = [
        bound[:at] + _branch(_digit_class(ALPHABET.index(bound[at]) + 1, len(ALPHABET) - 1), len(bound) - at - 1)
        for at in range(len(head))
        if bound[at] != _TOP
    ]
    # ... or the same head and at least the rest: one nesting per chunk, not per digit
    return _either(*greater, head + _at_least(rest) if rest else head)


def _at_most(bound: str) -> str:
    """Strings of len(bound) digits whose value is <= bound's."""
    if bound.strip(_TOP) == "":
        return _any(len(bound))
    head, rest = bound[:_CHUNK], bound[_CHUNK:]
    smaller = [
        bound[:at] + _branch(_digit_class(0, ALPHABET.index(bound[at]) - 1), len(bound) - at - 1)
        for at in range(len(head))
        if bound[at] != _ZERO
    ]
    return _either(*smaller, head + _at_most(rest) if rest else head)


def _between(low: str, high: str) -> str:
    """Strings of len(low) == len(high) digits whose value lies in [low, high]."""
    if not low:
        return ""
    if low[0] == high[0]:
        return low[0] + _between(low[1:], high[1:])
    first, last = ALPHABET.index(low[0]), ALPHABET.index(high[0])
    return _either(
        low[0] + _at_least(low[1:]),
        _branch(_digit_class(first + 1, last - 1), len(low) - 1),
        high[0] + _at_most(high[1:]),
    )


def _significant_digits(byte_count: int) -> str:
    """Base58 spellings (no leading "1") of the numbers that need exactly `byte_count` bytes."""
    low = base58.b58encode_int(256 ** (byte_count - 1)).decode("ascii")
    high = base58.b58encode_int(256**byte_count - 1).decode("ascii")
    choices = []
    for width in range(len(low), len(high) + 1):
        smallest = low if width == len(low) else ALPHABET[1] + _ZERO * (width - 1)
        largest = high if width == len(high) else _TOP * width
        choices.append(_between(smallest, largest))
    return _either(*choices)


def _leading_zeros(count: int) -> str:
    return "" if count == 0 else _ZERO if count == 1 else f"{_ZERO}{{{count}}}"


def _base58_of_bytes(byte_count: int, most_leading_zeros: int | None = None) -> str:
    """The unanchored group matching exactly the base58 texts of `byte_count` bytes (of those
    whose leading zero bytes number at most `most_leading_zeros`, when it is given)."""
    zero_counts = range(byte_count + 1) if most_leading_zeros is None else range(most_leading_zeros + 1)
    choices = [
        _leading_zeros(zeros) + _significant_digits(byte_count - zeros) if zeros < byte_count else _leading_zeros(zeros)
        for zeros in zero_counts
    ]
    # the common case (no leading zero byte) first, so a regex engine tries it first
    return "(?:" + "|".join(choices) + ")"


def crypto_hash_pattern() -> str:
    """The anchored pattern matching exactly the base58 texts of 32 bytes."""
    return "^" + _base58_of_bytes(HASH_BYTES) + "$"


def public_key_pattern() -> str:
    """The anchored pattern of a public key as nearcore writes it (core/crypto/src/signature.rs,
    `Display for PublicKey`): `ed25519:` and the base58 text of its 32 bytes (the same digits as
    a hash), or `secp256k1:` and the base58 text of its 64 bytes. The secp256k1 texts are those of
    at most SECP256K1_MOST_LEADING_ZEROS leading zero bytes: all 65 choices compile past the
    10 MiB that Rust's regex (pydantic's engine) allows, and a key left out has its first five
    bytes zero (2**-40 of random keys); the server reads those too."""
    ed25519 = "ed25519:" + _base58_of_bytes(ED25519_KEY_BYTES)
    secp256k1 = "secp256k1:" + _base58_of_bytes(SECP256K1_KEY_BYTES, SECP256K1_MOST_LEADING_ZEROS)
    return f"^(?:{ed25519}|{secp256k1})$"


if __name__ == "__main__":
    print(crypto_hash_pattern())
