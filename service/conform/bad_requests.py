"""A fixed set of bad requests, and nearcore's documented answer to each.

| request | nearcore |
|---|---|
| unknown method | 400, REQUEST_VALIDATION_ERROR / METHOD_NOT_FOUND, info.method_name, code -32601 |
| valid JSON, not a JSON-RPC request | 400, PARSE_ERROR, `id` null |
| bad params | 400, PARSE_ERROR, code -32700 |
| malformed JSON | 400, plain text (not JSON-RPC) |
| wrong Content-Type | 415, plain text |
| unknown block: height above the head, unknown hash | 200, HANDLER_ERROR / UNKNOWN_BLOCK |
| unknown block: `block_id` height below the head | 422 |
| unknown account | 200, HANDLER_ERROR / UNKNOWN_ACCOUNT, info.requested_account_id |
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from nearrpc.conform.answers import STATUS_PATH, Answer, not_held, not_held_judgement
from nearrpc.conform.endpoint import Exchange
from nearrpc.conform.facts import MISSING_ACCOUNT, UNKNOWN_HASH, EndpointFacts
from nearrpc.conform.probes import Judge, Judgement, Probe, RequestIds, expect_error, request_body, shown_params
from nearrpc.conform.spec_map import method_schemas
from nearrpc.conform.violations import Kind, Violation
from nearrpc.methods.errors import METHOD_CAUSES, Cause

ENDPOINT = "(endpoint)"
UNKNOWN_METHOD = "nearrpc_conform_no_such_method"
_ANY_METHOD_ERRORS = "block"  # whose error schema judges errors that no method owns (request validation)


def info_member(member: str, expected: object) -> Any:
    def check(answer: Answer) -> list[Violation]:
        cause = answer.error.get("cause") if answer.error else None
        info = cause.get("info") if isinstance(cause, dict) else None
        value = info.get(member) if isinstance(info, dict) else None
        if value == expected:
            return []
        return [Violation(f"error.cause.info.{member}", Kind.MISMATCH, f"{value!r}, expected {expected!r}")]

    return check


def refused(
    method: str, check: str, params: Any, cause: Cause, facts: EndpointFacts, ids: RequestIds, *,
    row_method: str | None = None, extra: Any = None,
) -> Probe:
    request_id = ids.take()
    # a method of the catalogue that a --spec document does not describe is still held to its causes
    owner = method if method in method_schemas() or method in METHOD_CAUSES else None
    component = method_schemas()[owner or _ANY_METHOD_ERRORS].error
    judge = expect_error(owner, component, request_id, params, cause, facts.final_height, extra)
    shown = f"{method} {shown_params(params)}"
    return Probe(row_method or method, check, shown, request_body(method, params, request_id), judge)


def _plain_text_refusal(status: int, what: str) -> Judge:
    """nearcore's HTTP layer refuses these before JSON-RPC: the status, and a plain-text body."""

    def judge(exchange: Exchange) -> Judgement:
        found = []
        if exchange.status != status:
            found.append(Violation(STATUS_PATH, Kind.RULE, f"{exchange.status}, nearcore answers {what} with {status}"))
        if not exchange.content_type.startswith("text/plain"):
            found.append(Violation("Content-Type", Kind.RULE,
                                   f"{exchange.content_type or 'none'!r}, nearcore answers {what} in plain text"))
        return Judgement(found)

    return judge


def _not_json_rpc(facts: EndpointFacts, ids: RequestIds) -> Probe:
    body = {"jsonrpc": "1.0", "id": ids.take(), "method": "block", "params": {"finality": "final"}}
    component = method_schemas()[_ANY_METHOD_ERRORS].error
    # nearcore cannot read the id of a request it cannot parse: it answers with id null
    judge = expect_error(None, component, None, body["params"], Cause.PARSE_ERROR, facts.final_height)
    return Probe(ENDPOINT, "not a JSON-RPC request", '{"jsonrpc":"1.0",...}', json.dumps(body).encode(), judge)


def bad_request_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    """The probes, each with the reason it cannot run ("" when it can)."""
    far, account = facts.far_height, facts.account
    valid = request_body("block", {"finality": "final"}, ids.take())
    probes: list[tuple[Probe, str]] = [
        (refused(UNKNOWN_METHOD, "unknown method", {}, Cause.METHOD_NOT_FOUND, facts, ids, row_method=ENDPOINT,
                  extra=info_member("method_name", UNKNOWN_METHOD)), ""),
        (_not_json_rpc(facts, ids), ""),
        (Probe(ENDPOINT, "malformed JSON", "a body cut short", valid[: len(valid) // 2],
               _plain_text_refusal(400, "a body that is not JSON")), ""),
        (Probe(ENDPOINT, "wrong content type", "Content-Type: text/plain", valid,
               _plain_text_refusal(415, "a Content-Type other than application/json"), "text/plain"), ""),
        (refused("block", "bad params", {"finality": "sometimes"}, Cause.PARSE_ERROR, facts, ids), ""),
        (refused("EXPERIMENTAL_view_account", "bad params: no account_id", {"finality": "final"},
                  Cause.PARSE_ERROR, facts, ids), ""),
        (refused("block", "unknown block: height above the head", {"block_id": far}, Cause.UNKNOWN_BLOCK,
                  facts, ids), ""),
        (refused("block", "unknown block: hash", {"block_id": UNKNOWN_HASH}, Cause.UNKNOWN_BLOCK, facts, ids), ""),
        (refused("EXPERIMENTAL_protocol_config", "unknown block: height above the head", {"block_id": far},
                  Cause.UNKNOWN_BLOCK, facts, ids), ""),
    ]
    view_far = {"account_id": account, "block_id": far}
    no_account = "" if account else "no account known (name one with --account)"
    probes.append((refused("EXPERIMENTAL_view_account", "unknown block: height above the head", view_far,
                            Cause.UNKNOWN_BLOCK, facts, ids,
                            extra=info_member("block_reference", {"block_id": far})), no_account))
    absent = facts.absent_height
    no_absent = "" if absent is not None else "no height below the head without a block was found"
    probes.append((refused("block", "unknown block: height below the head (422)", {"block_id": absent},
                            Cause.UNKNOWN_BLOCK, facts, ids), no_absent))
    probes.append((refused("EXPERIMENTAL_protocol_config", "unknown block: height below the head (422)",
                            {"block_id": absent}, Cause.UNKNOWN_BLOCK, facts, ids), no_absent))
    missing = {"account_id": MISSING_ACCOUNT, "finality": "final"}
    probes.append((or_not_held(refused("EXPERIMENTAL_view_account", "unknown account", missing,
                                        Cause.UNKNOWN_ACCOUNT, facts, ids,
                                        extra=info_member("requested_account_id", MISSING_ACCOUNT))), ""))
    return probes


def or_not_held(probe: Probe) -> Probe:
    """An endpoint that holds some accounts only (a node tracking some shards, a recording of
    chosen accounts) may answer that it does not hold the account instead: a note, not a fault."""
    schemas = method_schemas()
    component = schemas.get(probe.method, schemas[_ANY_METHOD_ERRORS]).error

    def judge(exchange: Exchange) -> Judgement:
        judgement = probe.judge(exchange)
        if judgement.answer is None or not not_held(judgement.answer):
            return judgement
        found, note = not_held_judgement(probe.method, component, exchange, judgement.answer)
        return Judgement(found, note, judgement.answer)

    return dataclasses.replace(probe, judge=judge)
