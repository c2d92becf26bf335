from __future__ import annotations

import random
from typing import Any

import base58
import pytest

from nearrpc.generated.methods import METHODS
from nearrpc.methods.blocks import reference_of
from nearrpc.methods.errors import RpcError
from nearrpc.methods.params import typed_params
from nearrpc.methods.params.readers import is_block_hash

HASH = "4reLvkAWfqk5fsqio1KLudk46cqRz9erQdaHkWZKMJDZ"
ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _decodes_to_32_bytes(text: str) -> bool:
    """The pure-Python base58 package's verdict: the oracle for the compiled decoder."""
    try:
        return len(base58.b58decode(text)) == 32
    except ValueError:
        return False


def test_block_hash_check_agrees_with_the_pure_python_decoder() -> None:
    rng = random.Random(21)
    texts = [base58.b58encode(rng.randbytes(n)).decode() for n in (31, 32, 33) for _ in range(100)]
    texts += [base58.b58encode(bytes(zeros) + rng.randbytes(32 - zeros)).decode() for zeros in range(33)]
    texts += ["".join(rng.choice(ALPHABET) for _ in range(length)) for length in range(28, 48) for _ in range(30)]
    texts += [HASH[:-1] + bad for bad in ("0", "O", "I", "l", " ", "é", "\u0000")] + ["", "1" * 32, "1" * 33]
    verdicts = [(text, is_block_hash(text)) for text in texts]
    assert any(valid for _, valid in verdicts) and not all(valid for _, valid in verdicts)
    assert [(text, _decodes_to_32_bytes(text)) for text in texts] == verdicts


def _parse_error(method: str, params: object) -> str:
    with pytest.raises(RpcError) as caught:
        typed_params(METHODS[method], params)
    assert caught.value.kind.cause == "PARSE_ERROR"
    assert caught.value.info == {"error_message": caught.value.data}
    return str(caught.value.data)


@pytest.mark.parametrize(
    ("params", "kind", "value"),
    [
        ({"block_id": 7}, "block_id", 7),
        ({"block_id": HASH}, "block_id", HASH),
        ({"finality": "near-final"}, "finality", "near-final"),
        ({"sync_checkpoint": "earliest_available"}, "sync_checkpoint", "earliest_available"),
        ({"unknown": 1, "finality": "final", "block_id": "not even a hash"}, "finality", "final"),  # first wins
        ({"block_id": 0, "finality": "bogus"}, "block_id", 0),
        ([7], "block_id", 7),
        ([HASH], "block_id", HASH),
        # JSON Schema's integer: an integral float is the height it equals (DEVIATIONS.md)
        ({"block_id": 7.0}, "block_id", 7),
        ({"block_id": 1e1}, "block_id", 10),
        ({"block_id": 0.0}, "block_id", 0),
        ([7.0], "block_id", 7),
    ],
)
def test_block_references(params: Any, kind: str, value: object) -> None:
    reference = reference_of(typed_params(METHODS["block"], params))
    assert (reference.kind, reference.value) == (kind, value)
    assert type(reference.value) is type(value)  # 7.0 arrives as the integer 7


def test_positional_form_is_only_for_block() -> None:
    assert "expected struct RpcProtocolConfigRequest" in _parse_error("EXPERIMENTAL_protocol_config", [7])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "no variant of enum BlockReference found in flattened data"),
        ({"account_id": "x"}, "no variant of enum BlockReference"),
        ({"block_id": "123"}, "did not match any variant of untagged enum BlockId"),
        ({"block_id": 1.5}, "did not match any variant of untagged enum BlockId"),
        ({"block_id": -1.0}, "did not match any variant"),
        ({"block_id": 2.0**64}, "did not match any variant"),
        ({"block_id": float("inf")}, "did not match any variant"),
        ({"block_id": -1}, "did not match any variant"),
        ({"block_id": 2**64}, "did not match any variant"),
        ({"block_id": True}, "did not match any variant"),
        ({"block_id": HASH[:-1]}, "did not match any variant"),  # 31 bytes
        ({"block_id": "0OIl" * 11}, "did not match any variant"),  # not base58
        ({"finality": "latest"}, "unknown variant `latest`, expected one of `optimistic`, `near-final`, `final`"),
        ({"finality": 1}, "invalid type: integer `1`, expected variant identifier"),
        ({"sync_checkpoint": "head"}, "unknown variant `head`"),
        (None, "invalid type: null, expected struct RpcBlockRequest"),
        ("final", 'invalid type: string "final", expected struct RpcBlockRequest'),
        ([], "invalid length 0"),
        ([1, 2], "invalid length 2"),
        (["final"], "did not match any variant"),
    ],
)
def test_bad_block_params(params: object, message: str) -> None:
    text = _parse_error("block", params)
    assert text.startswith("Failed parsing args: ") and message in text


def test_view_account_checks_the_account_first() -> None:
    assert _parse_error("EXPERIMENTAL_view_account", {"block_id": "bad"}) == (
        "Failed parsing args: missing field `account_id`"
    )
    assert "invalid character 'A'" in _parse_error("EXPERIMENTAL_view_account", {"account_id": "Alice", "block_id": 1})
    assert "expected a string" in _parse_error("EXPERIMENTAL_view_account", {"account_id": 5, "finality": "final"})


def test_view_account_typed() -> None:
    typed = typed_params(METHODS["EXPERIMENTAL_view_account"], {"finality": "final", "account_id": "a.near", "x": 1})
    assert typed.root.account_id.root == "a.near"
    assert reference_of(typed).value == "final"


@pytest.mark.parametrize("params", [None, [], {}, {"any": "thing"}, "text", 5])
@pytest.mark.parametrize("method", ["genesis_config", "client_config"])
def test_parameterless_methods_ignore_params(method: str, params: object) -> None:
    assert typed_params(METHODS[method], params).root is None
