"""Reading an HTTP answer as a JSON-RPC answer, and holding its error to nearcore's rules.

The rules come from the error catalogue (nearrpc.methods.errors): each cause's top-level
`name`, legacy `code` and `message`, whether `cause` carries `info`, and its HTTP status,
with the UNKNOWN_BLOCK-by-height 422 rule. They are nearcore's, as the catalogue documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nearrpc.conform.endpoint import Exchange
from nearrpc.conform.violations import Kind, Violation, note_text, schema_violations, shorten
from nearrpc.methods.errors import CATALOGUE, METHOD_CAUSES, Cause, RpcError

# every method can answer these (request validation)
_REQUEST_CAUSES = (Cause.PARSE_ERROR, Cause.METHOD_NOT_FOUND)
STATUS_PATH = "HTTP status"
BODY_PATH = "body"
# nearcore's text for state of a shard the node does not track (UNAVAILABLE_SHARD from `query`,
# INTERNAL_ERROR from the EXPERIMENTAL views); nearrpc's recordings answer it for an account
# they did not record. An endpoint may hold some accounts only: within the rules.
_NOT_HELD_TEXT = "does not track the shard ID"


@dataclass(frozen=True, slots=True)
class Answer:
    """A JSON-RPC answer: exactly one of `result` and `error` is set (`error` is a dict)."""

    result: Any
    error: dict[str, Any] | None

    @property
    def cause(self) -> str | None:
        if self.error is None:
            return None
        cause = self.error.get("cause")
        name = cause.get("name") if isinstance(cause, dict) else None
        return name if isinstance(name, str) else None


def _preview(exchange: Exchange) -> str:
    text = exchange.body[:80].decode("utf-8", "replace").replace("\n", " ")
    what = exchange.content_type or "no Content-Type"
    return f"HTTP {exchange.status}, {what}: {text!r}" if text else f"HTTP {exchange.status}, {what}, empty body"


def read_answer(exchange: Exchange, request_id: object) -> tuple[Answer | None, list[Violation]]:
    """The answer and what is wrong with its envelope; None when it is no JSON-RPC answer."""
    is_json, body = exchange.json()
    if not is_json or not isinstance(body, dict):
        return None, [Violation(BODY_PATH, Kind.NOT_JSON_RPC, shorten(f"not a JSON-RPC answer: {_preview(exchange)}"))]
    has_result, has_error = "result" in body, "error" in body
    if has_result == has_error:
        what = "both `result` and `error`" if has_result else "neither `result` nor `error`"
        return None, [Violation(BODY_PATH, Kind.NOT_JSON_RPC, f"a JSON object with {what}")]
    found: list[Violation] = []
    if body.get("jsonrpc") != "2.0":
        found.append(Violation("jsonrpc", Kind.BAD_VALUE, f"{body.get('jsonrpc')!r}, expected '2.0'"))
    if "id" not in body:
        found.append(Violation("id", Kind.MISSING, "'id' is required"))
    elif body["id"] != request_id or type(body["id"]) is not type(request_id):
        found.append(Violation("id", Kind.MISMATCH, f"{body['id']!r}, the request's id is {request_id!r}"))
    if not exchange.content_type.startswith("application/json"):
        found.append(Violation("Content-Type", Kind.RULE, f"{exchange.content_type!r}, expected application/json"))
    error = body.get("error")
    if has_error and not isinstance(error, dict):
        found.append(Violation("error", Kind.TYPE, f"{error!r} is not an object"))
        return None, found
    return Answer(body.get("result"), error), found


def expected_error_status(cause: Cause, params: object, head_height: int | None) -> int:
    """nearcore's HTTP status for `cause` in answer to `params` (the catalogue's rule)."""
    return RpcError(cause, {}, "", head_height=head_height).http_status(params)


def status_violation(exchange: Exchange, expected: int, why: str) -> list[Violation]:
    if exchange.status == expected:
        return []
    return [Violation(STATUS_PATH, Kind.RULE, f"{exchange.status}, nearcore answers {why} with {expected}")]


def error_violations(method: str | None, error_component: str, error: dict[str, Any]) -> list[Violation]:
    """The error against the spec and against the catalogue's rules for its cause (the HTTP
    status is the caller's: it depends on which cause the request should have met)."""
    found = schema_violations(error_component, error, "error")
    cause = error.get("cause")
    name = cause.get("name") if isinstance(cause, dict) else None
    allowed = (*_REQUEST_CAUSES, *METHOD_CAUSES.get(method or "", ()))
    if name not in {known.value for known in allowed}:
        found.append(Violation("error.cause.name", Kind.RULE,
                               f"{name!r} is not a cause {method or 'this request'} answers with "
                               f"({', '.join(allowed)})"))
        return found
    kind = CATALOGUE[Cause(name)]
    for member, value in (("name", kind.name), ("code", kind.code), ("message", kind.message)):
        if error.get(member) != value:
            found.append(Violation(f"error.{member}", Kind.RULE, f"{error.get(member)!r}, {name} comes with {value!r}"))
    if isinstance(cause, dict) and ("info" in cause) != kind.has_info:
        found.append(Violation("error.cause.info", Kind.RULE,
                               f"{name} {'carries' if kind.has_info else 'carries no'} `info` in nearcore's answers"))
    if "data" not in error:
        found.append(Violation("error.data", Kind.RULE, "nearcore always sends the legacy `data` member"))
    return found


def not_held(answer: Answer | None) -> bool:
    """Whether `answer` says the endpoint holds no state of the account asked about."""
    if answer is None or answer.error is None or answer.cause not in (Cause.INTERNAL_ERROR, Cause.UNAVAILABLE_SHARD):
        return False
    return _NOT_HELD_TEXT in str(answer.error.get("data"))


def not_held_judgement(
    method: str | None, error_component: str, exchange: Exchange, answer: Answer
) -> tuple[list[Violation], str]:
    """The violations and note of a not-held answer (`not_held`), held to its own cause's rules."""
    assert answer.error is not None and answer.cause is not None
    cause = Cause(answer.cause)
    found = error_violations(method, error_component, answer.error)
    found += status_violation(exchange, CATALOGUE[cause].http_status, cause)
    data = answer.error.get("data")
    return found, note_text(f"the endpoint does not hold this account: {cause}: {data}")
