"""The spec's CryptoHash pattern admits exactly the base58 texts of 32 bytes, as the server does.

Three views must agree on every text: the decoder (base58 of exactly 32 bytes, as nearcore's
`CryptoHash` parser), the spec's pattern (full match, as JSON Schema reads `^...$`), and the
server (params parsing, then the generated model, whose pattern runs on pydantic's engine).
Texts: random hashes with every count of leading zero bytes, the numbers at each byte-length
boundary, runs of "1", encodings of 31 and 33 bytes, and one-character edits of real hashes.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator

import base58
import pydantic
import pytest

from nearrpc.generated import models
from nearrpc.generated.methods import METHODS
from nearrpc.methods.errors import RpcError
from nearrpc.methods.params import typed_params
from tests.conftest import REPO
from tools.crypto_hash_pattern import ALPHABET, crypto_hash_pattern

SPEC = json.loads((REPO / "spec" / "openapi.json").read_text(encoding="utf-8"))
PATTERN = SPEC["components"]["schemas"]["CryptoHash"]["pattern"]
MATCHER = re.compile(PATTERN)


def decodes_to_32_bytes(text: str) -> bool:
    """nearcore's rule: every character in the alphabet, and the decoding exactly 32 bytes."""
    return bool(text) and set(text) <= set(ALPHABET) and len(base58.b58decode(text)) == 32


def encode(raw: bytes) -> str:
    return base58.b58encode(raw).decode("ascii")


def boundary_texts() -> Iterator[str]:
    """Around every length boundary: 256**(m-1) - 1, 256**(m-1), 256**m - 1, 256**m, with zeros before."""
    for size in range(1, 34):
        for number in (256 ** (size - 1) - 1, 256 ** (size - 1), 256**size - 1, 256**size):
            for zeros in (32 - size - 1, 32 - size, 32 - size + 1):
                if zeros >= 0 and number > 0:
                    yield "1" * zeros + base58.b58encode_int(number).decode("ascii")


def random_texts(rng: random.Random) -> Iterator[str]:
    for zeros in range(33):
        for _ in range(40):
            yield encode(bytes(zeros) + rng.randbytes(32 - zeros))
            yield encode(bytes(zeros) + rng.randbytes(max(0, 31 - zeros)))  # 31 bytes
            yield encode(bytes(zeros) + rng.randbytes(33 - zeros))  # 33 bytes


def edited_texts(rng: random.Random) -> Iterator[str]:
    for _ in range(400):
        text = encode(rng.randbytes(32))
        at = rng.randrange(len(text))
        yield text[:at] + text[at + 1 :]  # one character fewer
        yield text[:at] + rng.choice(ALPHABET) + text[at:]  # one more
        yield text[:at] + rng.choice(ALPHABET) + text[at + 1 :]  # one changed
        yield text[:at] + rng.choice("0OIl+/ \n") + text[at + 1 :]  # not base58
    yield encode(rng.randbytes(32)) + "\n"  # Python's `$` alone would let this one through


def all_texts() -> list[str]:
    rng = random.Random(13)
    texts = ["", *("1" * n for n in range(60)), *boundary_texts(), *random_texts(rng), *edited_texts(rng)]
    return list(dict.fromkeys(texts))


TEXTS = all_texts()


def test_the_spec_carries_the_generated_pattern() -> None:
    assert PATTERN == crypto_hash_pattern()
    assert SPEC["components"]["schemas"]["CryptoHash"]["minLength"] == 32
    assert SPEC["components"]["schemas"]["CryptoHash"]["maxLength"] == 44


def test_the_texts_cover_both_answers() -> None:
    valid = [text for text in TEXTS if decodes_to_32_bytes(text)]
    assert len(valid) > 1500 and len(TEXTS) - len(valid) > 3000
    assert {len(text) - len(text.lstrip("1")) for text in valid} == set(range(33))  # every zero-byte count


def test_the_pattern_admits_exactly_the_32_byte_texts() -> None:
    wrong = [text for text in TEXTS if bool(MATCHER.fullmatch(text)) != decodes_to_32_bytes(text)]
    assert wrong == []


def test_the_length_limits_agree_with_the_pattern() -> None:
    assert all(32 <= len(text) <= 44 for text in TEXTS if MATCHER.fullmatch(text))


def _server_accepts(text: str) -> bool:
    try:
        typed_params(METHODS["block"], {"block_id": text})
    except RpcError:
        return False
    return True


def test_the_server_accepts_exactly_what_the_pattern_admits() -> None:
    wrong = [text for text in TEXTS if _server_accepts(text) != bool(MATCHER.fullmatch(text))]
    assert wrong == []


@pytest.mark.parametrize("text", ["1" * 32, "1" * 43, "11111111111111111111111111111112", encode(b"\xff" * 32)])
def test_the_generated_model_agrees(text: str) -> None:
    """pydantic runs the pattern on its own (Rust) engine; it must read it the same way."""
    valid = decodes_to_32_bytes(text)
    try:
        models.CryptoHash.model_validate(text)
    except pydantic.ValidationError:
        assert not valid, text
    else:
        assert valid, text
