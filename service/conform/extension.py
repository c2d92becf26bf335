"""The request forms and bad requests of the methods beyond interface 1.2.14: status,
gas_price, query and the EXPERIMENTAL views of access keys and code.

Each answer is judged as the five's are: the spec's schema, nearcore's error rules and
statuses, and the block it names (query and the views name theirs). `query` is asked for
`view_account` on every reference form, for the account's access keys and code, and in the
legacy `[path, data]` form; an account may have no contract (NO_CONTRACT_CODE is within the
rules).
"""

from __future__ import annotations

from nearrpc.conform.bad_requests import refused
from nearrpc.conform.facts import EndpointFacts
from nearrpc.conform.forms import Expect, form_probe, reference_forms
from nearrpc.conform.probes import Probe, RequestIds
from nearrpc.methods.errors import Cause

_NO_ACCOUNT = "no account known (name one with --account)"


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
    return probes


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
    ]  # fmt: skip


def extension_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    """The probes of the extension, each with the reason it cannot run ("" when it can)."""
    return [*_form_probes(facts, ids), *_bad_requests(facts, ids)]
