"""The spec's PublicKey pattern admits the key texts nearcore writes: `ed25519:` and base58 of 32
bytes, `secp256k1:` and base58 of 64 bytes (but those of five or more leading zero bytes, which
Rust's regex cannot hold: DEVIATIONS `wire-public-key-syntax`).

Three views agree on every text: the key's decoding, the spec's pattern (full match) and the
generated model (pydantic's engine); the server's params reader takes every key the pattern admits.
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
from nearrpc.methods.params import typed_params
from tests.conftest import REPO
from tools.crypto_hash_pattern import SECP256K1_MOST_LEADING_ZEROS, public_key_pattern

SPEC = json.loads((REPO / "spec" / "openapi.json").read_text(encoding="utf-8"))
PATTERN = SPEC["components"]["schemas"]["PublicKey"]["pattern"]
MATCHER = re.compile(PATTERN)
SIZES = {"ed25519": 32, "secp256k1": 64}


def admitted(text: str) -> bool:
    """What the pattern should admit: a known type, base58 data of its size (secp256k1: at most
    SECP256K1_MOST_LEADING_ZEROS zero bytes first)."""
    key_type, _, data = text.partition(":")
    if key_type not in SIZES or not data or set(data) - set(base58.alphabet.decode()):
        return False
    raw = base58.b58decode(data)
    if len(raw) != SIZES[key_type]:
        return False
    return key_type == "ed25519" or len(raw) - len(raw.lstrip(b"\0")) <= SECP256K1_MOST_LEADING_ZEROS


def key_texts(rng: random.Random) -> Iterator[str]:
    for key_type, size in SIZES.items():
        for zeros in (*range(8), size - 1, size):
            for length in (size - 1, size, size + 1):
                for _ in range(6):
                    raw = bytes(zeros) + rng.randbytes(max(0, length - zeros))
                    yield f"{key_type}:{base58.b58encode(raw).decode()}"
        # the numbers at the byte-length boundaries
        for number in (256 ** (size - 1) - 1, 256 ** (size - 1), 256**size - 1, 256**size):
            yield f"{key_type}:{base58.b58encode_int(number).decode()}"
    yield "ed25519:" + base58.b58encode(rng.randbytes(64)).decode()  # a secp256k1 key's size
    yield "secp256k1:" + base58.b58encode(rng.randbytes(32)).decode()
    yield "secp256k1:" + base58.b58encode(rng.randbytes(64)).decode() + "\n"
    yield "ed448:" + base58.b58encode(rng.randbytes(32)).decode()


TEXTS = list(dict.fromkeys(key_texts(random.Random(29))))


def test_the_spec_carries_the_generated_pattern() -> None:
    assert PATTERN == public_key_pattern()
    assert SPEC["components"]["schemas"]["PublicKeyHandle"]["pattern"] == PATTERN


def test_the_texts_cover_both_answers_of_both_types() -> None:
    for key_type in SIZES:
        ours = [text for text in TEXTS if text.startswith(key_type + ":")]
        assert any(map(admitted, ours)) and not all(map(admitted, ours))


def test_the_pattern_admits_exactly_the_key_texts() -> None:
    assert [text for text in TEXTS if bool(MATCHER.fullmatch(text)) != admitted(text)] == []


def _model_admits(text: str) -> bool:
    try:
        models.PublicKey.model_validate(text)
    except pydantic.ValidationError:
        return False
    return True


def test_the_generated_model_agrees() -> None:
    """pydantic runs the pattern on its own (Rust) engine; it must read it the same way."""
    assert [text for text in TEXTS if _model_admits(text) != admitted(text)] == []


@pytest.mark.parametrize("key_type", list(SIZES))
def test_the_server_reads_every_admitted_key(key_type: str) -> None:
    keys = [text for text in TEXTS if text.startswith(key_type + ":") and admitted(text)]
    for key in keys:
        params = {"request_type": "view_access_key", "finality": "final", "account_id": "a.near", "public_key": key}
        assert typed_params(METHODS["query"], params).root.public_key.root == key
