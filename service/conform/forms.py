"""Every request form of the five methods, and what a conforming answer to each must show.

Blocks, hashes and accounts come from the endpoint's own answers (EndpointFacts): the final
block's height and hash, the genesis height, an existing account. Beyond the spec, an answer
must fit its request: the block asked for by height or hash is that block, `final` and later
references are not below the final block seen before, the genesis checkpoint is at the genesis
height, a protocol config belongs to the same chain, and the parameterless forms of a method
all give the same answer (nearcore ignores their params).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nearrpc.conform.answers import error_violations, expected_error_status, read_answer, status_violation
from nearrpc.conform.endpoint import Exchange
from nearrpc.conform.facts import EndpointFacts
from nearrpc.conform.probes import (
    OMITTED,
    Judge,
    Judgement,
    Probe,
    RequestIds,
    error_summary,
    request_body,
    shown_params,
)
from nearrpc.conform.spec_map import method_schemas
from nearrpc.conform.violations import Kind, Violation, field_path, schema_violations, shorten
from nearrpc.methods.errors import Cause

FINALITIES = ("optimistic", "near-final", "final")


@dataclass(frozen=True, slots=True)
class Expect:
    height: int | None = None
    block_hash: str | None = None
    min_height: int | None = None  # not below the final block seen before
    max_height: int | None = None  # not above it (earliest_available)
    may_fail: tuple[Cause, ...] = ()  # errors within the rules here (noted, not violations)
    same_as_first: bool = False  # the same result as the method's first parameterless form
    # (path in the result, the value the request names there): the chunk, transaction or receipt
    # asked for; ABSENT: the answer has no such member
    members: tuple[tuple[tuple[str, ...], object], ...] = ()


ABSENT: Any = object()  # Expect.members: the answer must not have this member


# where a result names the block it was read at (protocol configs name none; the changes
# methods name its hash only)
_BLOCK_FIELDS: dict[str, tuple[tuple[str, ...] | None, tuple[str, ...]]] = {
    "block": (("header", "height"), ("header", "hash")),
    "EXPERIMENTAL_view_account": (("block_height",), ("block_hash",)),
    # beyond interface 1.2.14
    "query": (("block_height",), ("block_hash",)),
    "EXPERIMENTAL_view_access_key_list": (("block_height",), ("block_hash",)),
    "EXPERIMENTAL_view_code": (("block_height",), ("block_hash",)),
    "EXPERIMENTAL_call_function": (("block_height",), ("block_hash",)),
    "EXPERIMENTAL_view_state": (("block_height",), ("block_hash",)),
    "EXPERIMENTAL_changes_in_block": (None, ("block_hash",)),
    "block_effects": (None, ("block_hash",)),
    "EXPERIMENTAL_changes": (None, ("block_hash",)),
    "changes": (None, ("block_hash",)),
}


def _at(value: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _block_fit(method: str, result: dict[str, Any], expect: Expect) -> list[Violation]:
    if method not in _BLOCK_FIELDS:
        return []
    height_keys, hash_keys = _BLOCK_FIELDS[method]
    block_hash, hash_path = _at(result, hash_keys), field_path("result", hash_keys)
    found = []
    if expect.block_hash is not None and block_hash != expect.block_hash:
        found.append(Violation(hash_path, Kind.MISMATCH, f"{block_hash!r}, the request asked for {expect.block_hash}"))
    if height_keys is None:
        return found
    height, height_path = _at(result, height_keys), field_path("result", height_keys)
    if not isinstance(height, int):
        return found
    if expect.height is not None and height != expect.height:
        found.append(Violation(height_path, Kind.MISMATCH, f"{height}, the request asked for height {expect.height}"))
    if expect.min_height is not None and height < expect.min_height:
        found.append(Violation(height_path, Kind.MISMATCH, f"{height}, below the final block ({expect.min_height})"))
    if expect.max_height is not None and height > expect.max_height:
        found.append(Violation(height_path, Kind.MISMATCH, f"{height}, above the final block ({expect.max_height})"))
    return found


def _chain_fit(method: str, result: dict[str, Any], facts: EndpointFacts) -> list[Violation]:
    if method != "EXPERIMENTAL_protocol_config":
        return []
    found = []
    for member, known in (("chain_id", facts.chain_id), ("genesis_height", facts.genesis_height)):
        if known is not None and result.get(member) != known:
            found.append(Violation(f"result.{member}", Kind.MISMATCH, f"{result.get(member)!r}, the genesis config "
                                   f"says {known!r}"))
    return found


def _members_fit(result: dict[str, Any], expect: Expect) -> list[Violation]:
    found = []
    for keys, expected in expect.members:
        parent = _at(result, keys[:-1])
        present = isinstance(parent, dict) and keys[-1] in parent
        value = parent.get(keys[-1]) if present and isinstance(parent, dict) else None
        path = field_path("result", keys)
        if expected is ABSENT and present:
            found.append(Violation(path, Kind.MISMATCH, "present, nearcore's answer to this method has no such member"))
        elif expected is not ABSENT and value != expected:
            found.append(Violation(path, Kind.MISMATCH, f"{value!r}, the request asked for {expected!r}"))
    return found


def _fit(method: str, result: Any, expect: Expect, facts: EndpointFacts) -> list[Violation]:
    if not isinstance(result, dict):
        return []  # the schema check has said what is wrong
    found = _block_fit(method, result, expect) + _chain_fit(method, result, facts) + _members_fit(result, expect)
    if expect.same_as_first:
        first = facts.first_results.setdefault(method, result)
        if result != first:
            found.append(Violation("result", Kind.MISMATCH, "differs from the answer to the first parameterless form"))
    return found


def form_judge(method: str, request_id: str, params: Any, expect: Expect, facts: EndpointFacts) -> Judge:
    schemas = method_schemas()[method]

    def judge(exchange: Exchange) -> Judgement:
        answer, found = read_answer(exchange, request_id)
        if answer is None:
            return Judgement(found)
        if answer.error is None:
            found += status_violation(exchange, 200, "a result")
            found += schema_violations(schemas.result, answer.result, "result")
            found += _fit(method, answer.result, expect, facts)
            return Judgement(found, answer=answer)
        found += error_violations(method, schemas.error, answer.error)
        if answer.cause in set(Cause):
            cause = Cause(answer.cause)
            found += status_violation(exchange, expected_error_status(cause, params, facts.final_height), cause)
            if cause in expect.may_fail:
                return Judgement(found, note=f"answered {error_summary(answer)}", answer=answer)
        found.append(Violation("error", Kind.MISMATCH, shorten(f"expected a result, got {error_summary(answer)}")))
        return Judgement(found, answer=answer)

    return judge


def form_probe(method: str, check: str, params: Any, expect: Expect, facts: EndpointFacts, ids: RequestIds) -> Probe:
    request_id = ids.take()
    return Probe(method, check, shown_params(params), request_body(method, params, request_id),
                 form_judge(method, request_id, params, expect, facts))


def parameterless_probes(method: str, facts: EndpointFacts, ids: RequestIds) -> list[Probe]:
    forms: tuple[tuple[str, Any], ...] = (
        ("params omitted", OMITTED), ("params null", None), ("params []", []), ("params {}", {})
    )
    return [form_probe(method, check, params, Expect(same_as_first=True), facts, ids) for check, params in forms]


def final_block_probe(facts: EndpointFacts, ids: RequestIds) -> Probe:
    """`block` at `final`: the first block request, which the other forms build on."""
    return form_probe("block", "finality final", {"finality": "final"}, Expect(), facts, ids)


def reference_forms(method: str, facts: EndpointFacts) -> list[tuple[str, Any, Expect]]:
    height, block_hash = facts.final_height, facts.final_hash
    checkpoint_may_fail = (Cause.UNKNOWN_BLOCK, Cause.NOT_SYNCED_YET)
    forms: list[tuple[str, Any, Expect]] = []
    if height is not None:
        forms.append(("block_id height", {"block_id": height}, Expect(height=height, block_hash=block_hash)))
    if block_hash is not None:
        forms.append(("block_id hash", {"block_id": block_hash}, Expect(height=height, block_hash=block_hash)))
    forms += [(f"finality {f}", {"finality": f}, Expect(min_height=height)) for f in FINALITIES
              if (method, f) != ("block", "final")]  # block at final ran first, for the facts
    forms.append(("sync_checkpoint genesis", {"sync_checkpoint": "genesis"},
                  Expect(height=facts.genesis_height, may_fail=checkpoint_may_fail)))
    forms.append(("sync_checkpoint earliest_available", {"sync_checkpoint": "earliest_available"},
                  Expect(max_height=height, may_fail=checkpoint_may_fail)))
    if method == "block":
        if height is not None:
            forms.append(("[block_id] height", [height], Expect(height=height, block_hash=block_hash)))
        if block_hash is not None:
            forms.append(("[block_id] hash", [block_hash], Expect(height=height, block_hash=block_hash)))
    return forms


def reference_probes(method: str, facts: EndpointFacts, ids: RequestIds) -> list[Probe]:
    """The block-reference forms of `block`, EXPERIMENTAL_protocol_config and
    EXPERIMENTAL_view_account (of `facts.account`, which may not exist at the checkpoints)."""
    probes = []
    for check, params, expect in reference_forms(method, facts):
        if method == "EXPERIMENTAL_view_account":
            params = {"account_id": facts.account, **params}
            if params.get("sync_checkpoint"):
                expect = Expect(expect.height, expect.block_hash, expect.min_height, expect.max_height,
                                (*expect.may_fail, Cause.UNKNOWN_ACCOUNT))
        probes.append(form_probe(method, check, params, expect, facts, ids))
    return probes
