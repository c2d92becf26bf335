"""Write-side validation: jsonschema-rs decides quickly, jsonschema words refusals; both must
give the same verdict on every value, valid or not."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import base58
import jsonschema
import orjson
import pytest

from nearrpc.sample import sample_chain
from nearrpc.spec import SchemaViolation, _fast_validator, validate_component, validator


def _same_verdict(component: str, value: Any) -> bool:
    fast = _fast_validator(component).is_valid(value)
    slow = jsonschema.exceptions.best_match(validator(component).iter_errors(value)) is None
    assert fast == slow, (component, value if len(repr(value)) < 400 else repr(value)[:400])
    return fast


def _mutations(value: Any, depth: int = 0) -> Iterator[Any]:
    """Values near `value`: a member dropped, retyped, or added; a string or number changed."""
    if isinstance(value, dict):
        for key in list(value)[:6]:
            variant: object
            for variant in (None, "x", -1, 2**70, [], {"extra": 1}):
                changed = dict(value)
                changed[key] = variant
                yield changed
            dropped = dict(value)
            del dropped[key]
            yield dropped
            if depth < 2:
                for inner in _mutations(value[key], depth + 1):
                    yield {**value, key: inner}
        yield {**value, "unexpected_member": True}
    elif isinstance(value, list) and value and depth < 2:
        for inner in _mutations(value[0], depth + 1):
            yield [inner, *value[1:]]


def _values() -> Iterator[tuple[str, Any]]:
    chain = sample_chain()
    yield "GenesisConfig", orjson.loads(chain.genesis_config_json)
    yield "RpcClientConfigResponse", orjson.loads(chain.client_config_json)
    for block in chain.blocks[::10]:
        yield "RpcBlockResponse", orjson.loads(block.view_json)
    for row in chain.account_states[::25]:
        if row.view_json is not None:
            view = orjson.loads(row.view_json)
            yield "RpcViewAccountResponse", {**view, "block_height": row.height, "block_hash": chain.blocks[0].hash}


@pytest.mark.parametrize(("component", "value"), list(_values()), ids=lambda v: v if isinstance(v, str) else "")
def test_valid_values_and_their_neighbours_get_one_verdict(component: str, value: Any) -> None:
    assert _same_verdict(component, value)
    refused = sum(not _same_verdict(component, changed) for changed in _mutations(copy.deepcopy(value)))
    assert refused > 0  # the neighbours include invalid values, so the comparison means something


def test_hashes_get_one_verdict() -> None:
    rng = random.Random(7)
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    texts = [base58.b58encode(rng.randbytes(n)).decode() for n in (31, 32, 32, 32, 33) for _ in range(40)]
    texts += ["".join(rng.choice(alphabet) for _ in range(length)) for length in range(30, 46) for _ in range(20)]
    texts += ["1" * 32, "1" * 43, "1" * 44, "0" * 32, "I" * 32, ""]
    verdicts = {text: _same_verdict("CryptoHash", text) for text in texts}
    assert any(verdicts.values()) and not all(verdicts.values())
    for text, valid in verdicts.items():
        try:
            decoded = len(base58.b58decode(text)) == 32 and len(text) > 0
        except ValueError:
            decoded = False
        assert valid == decoded, text


def test_a_refusal_names_the_schema_and_the_path() -> None:
    view = orjson.loads(sample_chain().blocks[3].view_json)
    del view["header"]["hash"]
    with pytest.raises(SchemaViolation, match=r"RpcBlockResponse at header: 'hash' is a required property"):
        validate_component("RpcBlockResponse", view)
