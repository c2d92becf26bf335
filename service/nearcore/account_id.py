"""NEAR account id syntax: 2 to 64 characters of lowercase letters and digits in parts joined by
`.`, `-` or `_`, no separator at either end or next to another one. Error texts follow the
near-account-id crate, which nearcore puts in its parse errors."""

from __future__ import annotations

import re

from nearrpc.nearcore.echo import shown

MIN_LEN = 2
MAX_LEN = 64
_SEPARATORS = frozenset("-_.")
_HEX = frozenset("0123456789abcdef")
# the valid ids at once (every request naming an account asks): parts of lowercase ASCII letters
# and digits, one separator between two; the loop below says what is wrong with any other
_VALID = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")


def account_id_problem(account_id: str) -> str | None:
    """None for a valid id, else what is wrong with it."""
    if MIN_LEN <= len(account_id) <= MAX_LEN and _VALID.fullmatch(account_id) is not None:
        return None
    if len(account_id) < MIN_LEN:
        return "the Account ID is too short"
    if len(account_id) > MAX_LEN:
        return "the Account ID is too long"
    previous_was_separator = True  # a leading separator is as redundant as a doubled one
    for index, char in enumerate(account_id):
        if char in _SEPARATORS:
            if previous_was_separator:
                return f"the Account ID has a redundant separator '{char}' at index {index}"
            previous_was_separator = True
        elif char.isascii() and (char.islower() or char.isdigit()):
            previous_was_separator = False
        else:
            return f"the Account ID contains an invalid character {char!r} at index {index}"
    if previous_was_separator:
        last = len(account_id) - 1
        return f"the Account ID has a redundant separator '{account_id[last]}' at index {last}"
    return None


def account_id_refusal(value: str) -> str | None:
    """serde's words refusing `value` as an AccountId (the value cut as echoes are), or None when
    it is one."""
    problem = account_id_problem(value)
    return None if problem is None else f'invalid value: "{shown(value)}", {problem}'


def account_type(account_id: str) -> str:
    """near-account-id's `get_account_type`: "NearImplicitAccount" (64 lowercase hex),
    "EthImplicitAccount" ("0x" then 40 lowercase hex), "NearDeterministicAccount" ("0s" then 40
    lowercase hex, NEP-616's state-init accounts) or "NamedAccount"."""
    if len(account_id) == 64 and _HEX.issuperset(account_id):
        return "NearImplicitAccount"
    if len(account_id) == 42 and account_id[:2] in ("0x", "0s") and _HEX.issuperset(account_id[2:]):
        return "EthImplicitAccount" if account_id[1] == "x" else "NearDeterministicAccount"
    return "NamedAccount"
