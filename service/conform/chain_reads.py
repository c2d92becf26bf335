"""The request forms and bad requests of the reads of what happened on the chain: chunk, tx,
EXPERIMENTAL_tx_status, EXPERIMENTAL_receipt, validators, EXPERIMENTAL_validators_ordered, the
changes methods (and their stable names block_effects and changes) and health.

Each answer is judged as the five's are (the spec's schema, nearcore's error rules and statuses)
and held to what it was asked for: the chunk by hash, or by the block and shard, is that chunk;
`tx` and `EXPERIMENTAL_tx_status` answer that transaction of that signer (`tx` without the
receipts); the receipt is that receipt; the changes name the block asked for. The chunk and the
transaction come from the walk back from the final block (chain_walk.py): an endpoint whose
last blocks carry no transaction runs the chunk forms only.

`chunk` is asked in all four of nearcore's forms ({chunk_id}, {block_id, shard_id}, [chunk_id],
[[block_id, shard_id]]), `tx` and EXPERIMENTAL_tx_status as {tx_hash, sender_account_id} (with and
without wait_until) and as the legacy [hash, sender], `validators` as [null], {"latest": null},
"latest", {"epoch_id"} and {"block_id"} (nearcore answers a block that does not end its epoch with
VALIDATOR_INFO_UNAVAILABLE: within the rules).
"""

from __future__ import annotations

from typing import Any

from nearrpc.conform.bad_requests import info_member, or_not_held, refused
from nearrpc.conform.facts import UNKNOWN_HASH, EndpointFacts
from nearrpc.conform.forms import ABSENT, Expect, form_probe
from nearrpc.conform.probes import Probe, RequestIds
from nearrpc.methods.errors import Cause

_NO_CHUNK = "no new chunk was found in the blocks up to the final block"
_NO_TRANSACTION = "no transaction was found in the chunks of the blocks up to the final block"
_NO_RECEIPT = "the transaction found names no receipt"
_NO_ACCOUNT = "no account known (name one with --account)"
# A shard id no layout has (nearcore's layouts number their shards from 0, a few dozen at most).
ABSENT_SHARD = 1_000_000
_CHANGES = ("EXPERIMENTAL_changes_in_block", "block_effects")
_CHANGES_BY_TYPE = ("EXPERIMENTAL_changes", "changes")


def _chunk_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    chunk = facts.chunk
    if chunk is None:
        forms: list[tuple[str, Any]] = [("{chunk_id}", {}), ("{block_id height, shard_id}", {}),
                                        ("{block_id hash, shard_id}", {}), ("[chunk_id]", []),
                                        ("[[block_id, shard_id]]", [])]  # fmt: skip
        return [(form_probe("chunk", check, params, Expect(), facts, ids), _NO_CHUNK) for check, params in forms]
    is_it = Expect(members=((("header", "chunk_hash"), chunk.chunk_hash), (("header", "shard_id"), chunk.shard_id)))
    return [(form_probe("chunk", check, params, is_it, facts, ids), "") for check, params in (
        ("{chunk_id}", {"chunk_id": chunk.chunk_hash}),
        ("{block_id height, shard_id}", {"block_id": chunk.height, "shard_id": chunk.shard_id}),
        ("{block_id hash, shard_id}", {"block_id": chunk.block_hash, "shard_id": chunk.shard_id}),
        ("[chunk_id]", [chunk.chunk_hash]),
        ("[[block_id, shard_id]]", [[chunk.height, chunk.shard_id]]),
    )]  # fmt: skip


def _transaction_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    tx = facts.transaction
    named = {"tx_hash": tx.tx_hash, "sender_account_id": tx.signer_id} if tx else {}
    legacy = [tx.tx_hash, tx.signer_id] if tx else []
    why_not = "" if tx else _NO_TRANSACTION
    probes = []
    for method in ("tx", "EXPERIMENTAL_tx_status"):
        members: tuple[tuple[tuple[str, ...], object], ...] = ()
        if tx is not None:
            members = ((("transaction", "hash"), tx.tx_hash), (("transaction", "signer_id"), tx.signer_id),
                       (("transaction_outcome", "id"), tx.tx_hash))  # fmt: skip
        if method == "tx":  # the outcome without the receipts EXPERIMENTAL_tx_status adds
            members += ((("receipts",), ABSENT),)
        expect = Expect(members=members)
        probes += [(form_probe(method, check, params, expect, facts, ids), why_not) for check, params in (
            ("{tx_hash, sender_account_id}", named),
            ("{tx_hash, sender_account_id, wait_until}", {**named, "wait_until": "EXECUTED_OPTIMISTIC"}),
            ("[hash, sender]", legacy),
        )]  # fmt: skip
    receipt_id = tx.receipt_id if tx else None
    is_it = Expect(members=((("receipt_id",), receipt_id),)) if receipt_id else Expect()
    no_receipt = why_not or ("" if receipt_id else _NO_RECEIPT)
    probes.append((form_probe("EXPERIMENTAL_receipt", "{receipt_id}", {"receipt_id": receipt_id}, is_it, facts, ids),
                   no_receipt))
    return probes


def _validator_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    probes: list[tuple[Probe, str]] = [
        (form_probe("validators", "[null]", [None], Expect(), facts, ids), ""),
        (form_probe("validators", '{"latest": null}', {"latest": None}, Expect(), facts, ids), ""),
        (form_probe("validators", '"latest"', "latest", Expect(), facts, ids), ""),  # EpochReference's unit variant
        (form_probe("EXPERIMENTAL_validators_ordered", "[null]", [None], Expect(), facts, ids), ""),
        (form_probe("EXPERIMENTAL_validators_ordered", '{"block_id": null}', {"block_id": None}, Expect(), facts,
                    ids), ""),
    ]  # fmt: skip
    epoch_id, height, block_hash = facts.epoch_id, facts.final_height, facts.final_hash
    if epoch_id is not None:
        probes.append((form_probe("validators", "{epoch_id} of the final block", {"epoch_id": epoch_id}, Expect(),
                                  facts, ids), ""))  # fmt: skip
    if height is not None:
        unavailable = Expect(may_fail=(Cause.VALIDATOR_INFO_UNAVAILABLE,))
        probes.append((form_probe("validators", "{block_id} final height", {"block_id": height}, unavailable, facts,
                                  ids), ""))  # fmt: skip
        probes.append((form_probe("EXPERIMENTAL_validators_ordered", "{block_id} final height", {"block_id": height},
                                  Expect(), facts, ids), ""))  # fmt: skip
    if block_hash is not None:
        probes.append((form_probe("EXPERIMENTAL_validators_ordered", "[final hash]", [block_hash], Expect(), facts,
                                  ids), ""))  # fmt: skip
    return probes


def _changes_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    height, block_hash = facts.final_height, facts.final_hash
    at_final = Expect(block_hash=block_hash)
    references: list[tuple[str, dict[str, Any]]] = [("finality final", {"finality": "final"})]
    if height is not None:
        references.insert(0, ("block_id height", {"block_id": height}))
    if block_hash is not None:
        references.insert(1, ("block_id hash", {"block_id": block_hash}))
    # every change of a block needs every shard: an endpoint holding some (a recording of chosen
    # accounts) says INTERNAL_ERROR, within the rules (a note)
    whole_block = Expect(block_hash=block_hash, may_fail=(Cause.INTERNAL_ERROR,))
    probes = [(form_probe(method, check, reference, whole_block, facts, ids), "")
              for method in _CHANGES for check, reference in references]  # fmt: skip
    # a recording of chosen accounts answers the changes of the accounts it holds only: that it
    # does not hold the rest is a note (as for the views), not a fault
    account = facts.account
    why_not = "" if account else _NO_ACCOUNT
    accounts = {"account_ids": [account]}
    kinds: list[tuple[str, dict[str, Any]]] = [
        ("account_changes", accounts), ("all_access_key_changes", accounts), ("contract_code_changes", accounts),
        ("data_changes", {**accounts, "key_prefix_base64": ""}),
    ]  # fmt: skip
    for method in _CHANGES_BY_TYPE:
        probes += [(or_not_held(form_probe(method, f"{kind} finality final",
                                           {"changes_type": kind, **members, "finality": "final"}, at_final, facts,
                                           ids)), why_not) for kind, members in kinds]  # fmt: skip
    tx = facts.transaction
    key = [{"account_id": tx.signer_id, "public_key": tx.public_key}] if tx else []
    keys = {"changes_type": "single_access_key_changes", "keys": key, "finality": "final"}
    probes.append((or_not_held(form_probe("EXPERIMENTAL_changes", "single_access_key_changes of the transaction's key",
                                          keys, at_final, facts, ids)), "" if tx else _NO_TRANSACTION))  # fmt: skip
    return probes


def _health_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    return [(form_probe("health", check, params, Expect(), facts, ids), "")
            for check, params in (("params null", None), ("params []", []))]  # fmt: skip


def _bad_requests(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    far, height = facts.far_height, facts.final_height
    sender = facts.account or (facts.transaction.signer_id if facts.transaction else None)
    no_sender = "" if sender else _NO_ACCOUNT
    # wait_until NONE: nearcore answers UNKNOWN_TRANSACTION at once; any other waits for it to
    # appear, and answers TIMEOUT_ERROR once its poll runs out (10 s on a node)
    unknown_tx = {"tx_hash": UNKNOWN_HASH, "sender_account_id": sender, "wait_until": "NONE"}
    probes: list[tuple[Probe, str]] = [
        (refused("chunk", "unknown chunk", {"chunk_id": UNKNOWN_HASH}, Cause.UNKNOWN_CHUNK, facts, ids,
                 extra=info_member("chunk_hash", UNKNOWN_HASH)), ""),
        (refused("chunk", "unknown block: height above the head", {"block_id": far, "shard_id": 0},
                 Cause.UNKNOWN_BLOCK, facts, ids), ""),
        (refused("chunk", "bad params: no shard_id", {"block_id": height}, Cause.PARSE_ERROR, facts, ids), ""),
        (refused("tx", "unknown transaction: wait_until NONE", unknown_tx, Cause.UNKNOWN_TRANSACTION, facts, ids,
                 extra=info_member("requested_transaction_hash", UNKNOWN_HASH)), no_sender),
        (refused("tx", "bad params: no sender_account_id", {"tx_hash": UNKNOWN_HASH}, Cause.PARSE_ERROR, facts,
                 ids), ""),
        (refused("EXPERIMENTAL_tx_status", "unknown transaction: wait_until NONE", unknown_tx,
                 Cause.UNKNOWN_TRANSACTION, facts, ids, extra=info_member("requested_transaction_hash", UNKNOWN_HASH)),
         no_sender),
        (refused("EXPERIMENTAL_receipt", "unknown receipt", {"receipt_id": UNKNOWN_HASH}, Cause.UNKNOWN_RECEIPT,
                 facts, ids, extra=info_member("receipt_id", UNKNOWN_HASH)), ""),
        (refused("EXPERIMENTAL_receipt", "bad params: {}", {}, Cause.PARSE_ERROR, facts, ids), ""),
        (refused("validators", "unknown epoch", {"epoch_id": UNKNOWN_HASH}, Cause.UNKNOWN_EPOCH, facts, ids), ""),
        (refused("validators", "unknown block: height above the head", {"block_id": far}, Cause.UNKNOWN_EPOCH, facts,
                 ids), ""),
        (refused("EXPERIMENTAL_validators_ordered", "unknown block: height above the head", {"block_id": far},
                 Cause.UNKNOWN_EPOCH, facts, ids), ""),
        (refused("EXPERIMENTAL_changes_in_block", "unknown block: height above the head", {"block_id": far},
                 Cause.UNKNOWN_BLOCK, facts, ids), ""),
        (refused("EXPERIMENTAL_changes", "bad params: unknown changes_type",
                 {"changes_type": "no_such_changes", "account_ids": [], "finality": "final"}, Cause.PARSE_ERROR, facts,
                 ids), ""),
    ]  # fmt: skip
    chunk = facts.chunk
    shard = {"block_id": chunk.block_hash if chunk else None, "shard_id": ABSENT_SHARD}
    probes.append((refused("chunk", "invalid shard id", shard, Cause.INVALID_SHARD_ID, facts, ids,
                           extra=info_member("shard_id", ABSENT_SHARD)), "" if chunk else _NO_CHUNK))  # fmt: skip
    return probes


def chain_read_probes(facts: EndpointFacts, ids: RequestIds) -> list[tuple[Probe, str]]:
    """The probes, each with the reason it cannot run ("" when it can)."""
    return [*_chunk_probes(facts, ids), *_transaction_probes(facts, ids), *_validator_probes(facts, ids),
            *_changes_probes(facts, ids), *_health_probes(facts, ids), *_bad_requests(facts, ids)]  # fmt: skip
