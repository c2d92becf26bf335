"""The request forms and bad requests of the methods beyond interface 1.2.14: status,
gas_price, query and the EXPERIMENTAL views of access keys, code, contract calls and state.

Each answer is judged as the five's are: the spec's schema, nearcore's error rules and
statuses, and the block it names (query and the views name theirs). `query` is asked for
`view_account` on every reference form, for the account's access keys and code, and in the
legacy `[path, data]` form; an account may have no contract (NO_CONTRACT_CODE is within the
rules). A view call and a state listing are asked in every form, object and legacy: the call of
--contract's method, held to answering a result, or else `get_num` of the account, which may
fail in the contract (query: a result with an `error` text; EXPERIMENTAL_call_function:
CONTRACT_EXECUTION_ERROR); a node may not track the shard
(UNAVAILABLE_SHARD, which the EXPERIMENTAL methods give as INTERNAL_ERROR) or refuse a state too
large to list; an account that cannot exist is UNKNOWN_ACCOUNT on each.
"""

from __future__ import annotations

from nearrpc.conform.bad_requests import or_not_held, refused
from nearrpc.conform.facts import EndpointFacts
from nearrpc.conform.forms import Expect, form_probe, reference_forms
from nearrpc.conform.probes import Probe, RequestIds
from nearrpc.methods.errors import Cause

_NO_ACCOUNT = "no account known (name one with --account)"
# A valid account id no chain has: a top-level name under 32 characters only the registrar creates.
ABSENT_ACCOUNT = "no-such-account.nearrpc-conform"
_CALL = {"method_name": "get_num", "args_base64": ""}
_STATE = {"prefix_base64": ""}


def _call_probes(facts: EndpointFacts, ids: RequestIds) -> list[Probe]:
    """query call_function in each form, and EXPERIMENTAL_call_function: of --contract's method,
    held to answering a result; without it, `get_num` of the account viewed, which may fail in
    the contract (the report's account line says so and names --contract)."""
    height, block_hash, final = facts.final_height, facts.final_hash, {"finality": "final"}
    if facts.contract is not None:
        account_id, method_name = facts.contract
        call = {"account_id": account_id, "method_name": method_name, "args_base64": ""}
        at_final = Expect(height, block_hash)
        return [
            form_probe("query", f"call_function {method_name} of --contract", {"request_type": "call_function",
                       **call, **final}, at_final, facts, ids),
            form_probe("query", f'["call/<contract>/{method_name}", ""]', [f"call/{account_id}/{method_name}", ""],
                       Expect(min_height=height), facts, ids),
            form_probe("EXPERIMENTAL_call_function", f"{method_name} of --contract", {**call, **final}, at_final,
                       facts, ids),
        ]  # fmt: skip
    account = {"account_id": facts.account}
    call_may_fail = Expect(height, block_hash, may_fail=(Cause.UNAVAILABLE_SHARD,))
    experimental_call = Expect(height, block_hash, may_fail=(Cause.CONTRACT_EXECUTION_ERROR, Cause.INTERNAL_ERROR))
    legacy_call = Expect(min_height=height, may_fail=(Cause.UNAVAILABLE_SHARD,))
    return [
        form_probe("query", "call_function finality final", {"request_type": "call_function", **account, **_CALL,
                   **final}, call_may_fail, facts, ids),
        form_probe("query", '["call/<id>/get_num", ""]', [f"call/{facts.account}/get_num", ""], legacy_call, facts,
                   ids),
        form_probe("EXPERIMENTAL_call_function", "finality final", {**account, **_CALL, **final}, experimental_call,
                   facts, ids),
    ]  # fmt: skip


def _view_state_probes(facts: EndpointFacts, ids: RequestIds) -> list[Probe]:
    """query view_state in each form, and EXPERIMENTAL_view_state, of the account viewed."""
    account, final = {"account_id": facts.account}, {"finality": "final"}
    height, block_hash = facts.final_height, facts.final_hash
    state_may_fail = Expect(height, block_hash, may_fail=(Cause.UNAVAILABLE_SHARD, Cause.TOO_LARGE_CONTRACT_STATE))
    experimental_state = Expect(height, block_hash, may_fail=(Cause.TOO_LARGE_CONTRACT_STATE, Cause.INTERNAL_ERROR))
    legacy_state = Expect(min_height=facts.final_height, may_fail=state_may_fail.may_fail)
    return [
        form_probe("query", "view_state finality final", {"request_type": "view_state", **account, **_STATE,
                   **final}, state_may_fail, facts, ids),
        form_probe("query", '["contract/<id>", ""]', [f"contract/{facts.account}", ""], legacy_state, facts, ids),
        form_probe("EXPERIMENTAL_view_state", "finality final", {**account, **_STATE, **final}, experimental_state,
                   facts, ids),
    ]  # fmt: skip


def _unknown_account_probes(facts: EndpointFacts, ids: RequestIds) -> list[Probe]:
    absent, final = {"account_id": ABSENT_ACCOUNT}, {"finality": "final"}
    # a recording of chosen accounts may answer that it does not hold the account: a note
    return [or_not_held(probe) for probe in (
        refused("query", "unknown account: call_function", {"request_type": "call_function", **absent, **_CALL,
                **final}, Cause.UNKNOWN_ACCOUNT, facts, ids),
        refused("query", "unknown account: legacy call path", [f"call/{ABSENT_ACCOUNT}/get_num", ""],
                Cause.UNKNOWN_ACCOUNT, facts, ids),
        refused("EXPERIMENTAL_call_function", "unknown account", {**absent, **_CALL, **final}, Cause.UNKNOWN_ACCOUNT,
                facts, ids),
        refused("query", "unknown account: view_state", {"request_type": "view_state", **absent, **_STATE, **final},
                Cause.UNKNOWN_ACCOUNT, facts, ids),
        refused("EXPERIMENTAL_view_state", "unknown account", {**absent, **_STATE, **final}, Cause.UNKNOWN_ACCOUNT,
                facts, ids),
    )]  # fmt: skip


def _form_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    final, height, block_hash = {"finality": "final"}, facts.final_height, facts.final_hash
    at_final = Expect(height=height, block_hash=block_hash) if height is not None else Expect()
    probes: list[tuple[Probe, str]] = [
        (form_probe("status", "params null", None, Expect(), facts, ids), ""),
        (form_probe("status", "params []", [], Expect(), facts, ids), ""),
        (form_probe("gas_price", "[null]", [None], Expect(), facts, ids), ""),
    ]
    if height is not None:
        probes.append((form_probe("gas_price", "[height]", [height], Expect(), facts, ids), ""))
    if block_hash is not None:
        probes.append((form_probe("gas_price", "[hash]", [block_hash], Expect(), facts, ids), ""))
    why_not = "" if facts.account else _NO_ACCOUNT
    account = {"account_id": facts.account}
    for check, reference, expect in reference_forms("query", facts):
        if reference.get("sync_checkpoint"):
            expect = Expect(expect.height, expect.block_hash, expect.min_height, expect.max_height,
                            (*expect.may_fail, Cause.UNKNOWN_ACCOUNT, Cause.NO_SYNCED_BLOCKS))
        params = {"request_type": "view_account", **account, **reference}
        probes.append((form_probe("query", f"view_account {check}", params, expect, facts, ids), why_not))
    keys = {"request_type": "view_access_key_list", **account, **final}
    code_may_fail = Expect(at_final.height, at_final.block_hash, may_fail=(Cause.NO_CONTRACT_CODE,))
    probes += [
        (form_probe("query", "view_access_key_list finality final", keys, at_final, facts, ids), why_not),
        (form_probe("query", "view_code finality final", {**keys, "request_type": "view_code"}, code_may_fail,
                    facts, ids), why_not),
        (form_probe("query", '["account/<id>", ""]', [f"account/{facts.account}", ""], Expect(min_height=height),
                    facts, ids), why_not),
        (form_probe("EXPERIMENTAL_view_access_key_list", "finality final", {**account, **final}, at_final, facts,
                    ids), why_not),
        (form_probe("EXPERIMENTAL_view_code", "finality final", {**account, **final}, code_may_fail, facts, ids),
         why_not),
    ]  # fmt: skip
    probes += [(probe, "" if facts.contract is not None else why_not) for probe in _call_probes(facts, ids)]
    probes += [(probe, why_not) for probe in _view_state_probes(facts, ids)]
    probes += [(probe, "") for probe in _contract_state_probes(facts, ids)]
    return probes


def _contract_state_probes(facts: EndpointFacts, ids: RequestIds) -> list[Probe]:
    """With --contract: the contract's state lists (or is refused as too large)."""
    if facts.contract is None:
        return []
    state = {"account_id": facts.contract[0], **_STATE, "finality": "final"}
    return [
        form_probe("EXPERIMENTAL_view_state", "state of --contract", state,
                   Expect(facts.final_height, facts.final_hash, may_fail=(Cause.TOO_LARGE_CONTRACT_STATE,)), facts,
                   ids),
    ]  # fmt: skip


def _bad_requests(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    far = facts.far_height
    no_key = {"account_id": facts.account, "public_key": "ed25519:" + "1" * 32, "finality": "final"}
    why_not = "" if facts.account else _NO_ACCOUNT
    return [
        (refused("gas_price", "bad params: []", [], Cause.PARSE_ERROR, facts, ids), ""),
        (refused("gas_price", "unknown block: height above the head", [far], Cause.UNKNOWN_BLOCK, facts, ids), ""),
        (refused("query", "bad params: unknown request_type", {"request_type": "view_nothing", "finality": "final"},
                 Cause.PARSE_ERROR, facts, ids), ""),
        (refused("query", "unknown block: height above the head",
                 {"request_type": "view_account", "account_id": facts.account, "block_id": far},
                 Cause.UNKNOWN_BLOCK, facts, ids), why_not),
        (refused("EXPERIMENTAL_view_access_key", "unknown access key", no_key, Cause.UNKNOWN_ACCESS_KEY, facts,
                 ids), why_not),
        *((probe, "") for probe in _unknown_account_probes(facts, ids)),
    ]  # fmt: skip


def extension_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    """The probes of the extension, each with the reason it cannot run ("" when it can)."""
    return [*_form_probes(facts, ids), *_bad_requests(facts, ids)]
