from __future__ import annotations

import itertools
import re

import pytest

from nearrpc.nearcore.account_id import account_id_problem
from nearrpc.spec import spec_document

VALID = ["ab", "alice.near", "a-b_c.d", "0" * 64, "near", "sub.alice.testnet", "x_1-2.y3"]
INVALID = {
    "a": "too short",
    "a" * 65: "too long",
    "Alice.near": "invalid character 'A' at index 0",
    "alice..near": "redundant separator '.' at index 6",
    ".alice": "redundant separator '.' at index 0",
    "alice.": "redundant separator '.' at index 5",
    "al ice": "invalid character ' ' at index 2",
    "al-_ice": "redundant separator '_' at index 3",
    "émile": "invalid character 'é' at index 0",
}


@pytest.mark.parametrize("account_id", VALID)
def test_valid_ids(account_id: str) -> None:
    assert account_id_problem(account_id) is None


@pytest.mark.parametrize(("account_id", "problem"), INVALID.items())
def test_invalid_ids_name_the_problem(account_id: str, problem: str) -> None:
    found = account_id_problem(account_id)
    assert found is not None and problem in found


@pytest.mark.parametrize("account_id", VALID + list(INVALID))
def test_spec_pattern_agrees_with_the_validator(account_id: str) -> None:
    schema = spec_document()["components"]["schemas"]["AccountId"]
    by_spec = schema["minLength"] <= len(account_id) <= schema["maxLength"] and bool(
        re.fullmatch(schema["pattern"], account_id)
    )
    assert by_spec == (account_id_problem(account_id) is None)


def test_every_short_id_is_judged_as_the_spec_pattern_judges_it() -> None:
    """Valid ids are told at once by a pattern, any other by the loop that names its problem:
    both agree with the spec's pattern over every id of up to 4 characters from letters, digits,
    the separators and characters that are none of them (a newline, where `$` would match)."""
    schema = spec_document()["components"]["schemas"]["AccountId"]
    judged = 0
    for length in range(1, 5):
        for chars in itertools.product("a9-_.A\né", repeat=length):
            account_id = "".join(chars)
            by_spec = len(account_id) >= schema["minLength"] and bool(re.fullmatch(schema["pattern"], account_id))
            assert (account_id_problem(account_id) is None) == by_spec, account_id
            judged += 1
    for account_id in ("a" * 64, "a" * 65, "ab\n", "a." * 31 + "ab", "a." * 32 + "a"):
        by_spec = len(account_id) <= schema["maxLength"] and bool(re.fullmatch(schema["pattern"], account_id))
        assert (account_id_problem(account_id) is None) == by_spec, account_id
    assert judged > 4000
