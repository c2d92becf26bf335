"""The fork's side of its hooks, without a server: `--verify-calls` (fork/verify.py) says whether
the upstream answers a view call otherwise and logs it; an error answer always differs, shown by
its cause; an upstream that cannot answer is no difference. What a changes request asks the
upstream (fork/changes.py): the request without its block reference and its nulls."""

from __future__ import annotations

import asyncio
import logging

import orjson
import pytest

from nearrpc.fork.calls import CallAnswer
from nearrpc.fork.changes import upstream_params
from nearrpc.fork.verify import UpstreamVerifier
from nearrpc.store import StoredBlock

BLOCK = StoredBlock(height=7, hash="Hash7", prev_hash="Hash6", epoch_id="E", last_final_block="Hash6",
                    last_ds_final_block="Hash6", view_json=b"{}")  # fmt: skip
LOCAL = orjson.dumps({"result": [49], "logs": [], "block_height": 7, "block_hash": "Hash7"})


class Upstream:
    def __init__(self, answer: CallAnswer | Exception) -> None:
        self.answer = answer

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> CallAnswer:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _differs(answer: CallAnswer | Exception) -> bool:
    return asyncio.run(UpstreamVerifier(Upstream(answer)).differs("c.near", "get", b"", BLOCK, LOCAL))


def test_the_same_answer_is_no_difference_and_another_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    assert not _differs(CallAnswer(LOCAL, None))
    with caplog.at_level(logging.WARNING, logger="nearrpc.view_calls"):
        assert _differs(CallAnswer(LOCAL.replace(b"[49]", b"[50]"), None))
    assert "verify-calls: c.near.get at block Hash7 (7) differs" in caplog.text


def test_an_error_answer_differs_by_its_cause(caplog: pytest.LogCaptureFixture) -> None:
    error = {"name": "HANDLER_ERROR", "cause": {"name": "UNKNOWN_ACCOUNT", "info": {}}, "data": "no c.near"}
    with caplog.at_level(logging.WARNING, logger="nearrpc.view_calls"):
        assert _differs(CallAnswer(None, error))
    assert '"error cause":"UNKNOWN_ACCOUNT"' in caplog.text


def test_no_upstream_answer_is_no_difference(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="nearrpc.view_calls"):
        assert not _differs(TimeoutError("upstream gone"))
    assert "no upstream answer for c.near.get at Hash7: upstream gone" in caplog.text


def test_a_changes_request_asks_the_upstream_without_its_block_reference_or_nulls() -> None:
    request = {"block_id": 7, "finality": None, "changes_type": "account_changes", "account_ids": ["a"], "x": None}
    assert upstream_params(request) == {"changes_type": "account_changes", "account_ids": ["a"]}
    assert upstream_params({"finality": "final"}) == {}
