"""The contract passes' groups of operations (tests/contract/test_schemathesis.py) cover the spec:
each run checks only that it drew its own group, so a group that lost an operation, or an
operation in two groups, would pass unnoticed in the deep tier. Read from the parameters the
pass tests are collected with; no schemathesis run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.contract import test_schemathesis as contract


def _groups(test: Callable[..., Any]) -> list[tuple[str, ...]]:
    """The `operations` a pass test is parametrized with, one group per run."""
    for mark in getattr(test, "pytestmark", []):
        if mark.name == "parametrize" and mark.args[0] == "operations":
            return [param.values[0] for param in mark.args[1]]
    raise AssertionError(f"{test.__name__} is not parametrized by operations")


def test_each_pass_runs_every_operation_of_the_spec_exactly_once() -> None:
    spec = contract.spec_operations()
    assert len(spec) > 20  # the spec was read (28 operations: POST /, a path per method, the GETs)
    for test in (contract.test_schemathesis_finds_no_failure, contract.test_unsteered_schemathesis_finds_no_failure):
        groups = _groups(test)
        counted = Counter(operation for group in groups for operation in group)
        assert set(counted) == spec, (test.__name__, spec ^ set(counted))
        assert all(count == 1 for count in counted.values()), (test.__name__, counted.most_common(3))
        assert len(groups) > 1 and all(groups), test.__name__


def test_balanced_groups_hand_out_every_operation_once() -> None:
    operations = tuple(f"POST /m{index}" for index in range(23))
    seconds = {"POST /m3": 50.0, "POST /m7": 20.0, "default": 1.0}
    for count in (1, 3, 7, 30):
        groups = contract.balanced_groups(operations, seconds, count)
        assert sorted(operation for group in groups for operation in group) == sorted(operations), count
        assert len(groups) == min(count, len(operations)), count
