"""Refusals a mutation pass found untested (issue 33, item 10): each names the member at fault in
nearcore's words, so a mutant that swaps the message, loosens the validation or drops a check
answers something else."""

from __future__ import annotations

from typing import Any

import pytest

from nearrpc.generated.methods import METHODS
from nearrpc.methods.blocks import BlockReference
from nearrpc.methods.errors import RpcError
from nearrpc.methods.params import typed_params

VIEW_STATE = {"request_type": "view_state", "account_id": "alice.near", "prefix_base64": ""}
REFERENCES: list[dict[str, Any]] = [{"finality": "final"}, {"block_id": 5}, {"sync_checkpoint": "genesis"}]


def _refusal(method: str, params: object) -> str:
    with pytest.raises(RpcError) as caught:
        typed_params(METHODS[method], params)
    assert caught.value.kind.cause == "PARSE_ERROR"
    assert caught.value.info == {"error_message": caught.value.data}
    return str(caught.value.data)


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda reference: next(iter(reference)))
@pytest.mark.parametrize(
    ("members", "text"),
    [
        # strict: a number in a string is no number (a lax model would take "10" as 10)
        ({"limit": "10"}, 'invalid type: string "10", expected an integer for `limit`'),
        ({"limit": True}, "invalid type: boolean `true`, expected an integer for `limit`"),
        ({"limit": 0}, "invalid value: integer `0`, expected at least 1 for `limit`"),
        ({"limit": 2**32}, "invalid value: integer `4294967296`, expected at most 4294967295 for `limit`"),
        ({"after_key_base64": 5}, "invalid type: integer `5`, expected a string for `after_key_base64`"),
        # two at fault: the first in the spec's order of members is named
        ({"limit": "10", "after_key_base64": 5}, "invalid type: integer `5`, expected a string for `after_key_base64`"),
    ],
)
def test_a_refused_member_is_named_in_the_branch_the_request_means(
    reference: dict[str, Any], members: dict[str, Any], text: str
) -> None:
    """Not "Field required at RpcQueryRequest1.block_id" for a request that names a finality:
    the error of the view_state branch with the request's own reference member."""
    assert _refusal("query", {**VIEW_STATE, **members, **reference}) == f"Failed parsing args: {text}"


def test_a_valid_view_state_request_passes_the_model() -> None:
    typed = typed_params(METHODS["query"], {**VIEW_STATE, "limit": 10, "finality": "final"})
    assert typed.root.limit == 10 and typed.root.finality.root == "final"


def test_the_access_key_view_needs_a_public_key() -> None:
    for reference in REFERENCES:
        params = {"account_id": "alice.near", **reference}
        assert _refusal("EXPERIMENTAL_view_access_key", params) == "Failed parsing args: missing field `public_key`"


@pytest.mark.parametrize(
    ("account_id", "problem"),
    [
        ("Alice.near", "the Account ID contains an invalid character 'A' at index 0"),
        ("a", "the Account ID is too short"),
        ("alice..near", "the Account ID has a redundant separator '.' at index 6"),
    ],
)
def test_query_checks_its_own_account_id(account_id: str, problem: str) -> None:
    """query's account goes through nearcore's parser, as the views' does, not only the model's pattern."""
    text = _refusal("query", {"request_type": "view_account", "account_id": account_id, "finality": "final"})
    assert text == f'Failed parsing args: invalid value: "{account_id}", {problem}'


@pytest.mark.parametrize(
    ("value", "kind"),
    [(True, "boolean `true`"), (False, "boolean `false`"), (None, "null"), ([], "sequence"), ({}, "map")],
)
@pytest.mark.parametrize("member", ["finality", "sync_checkpoint"])
def test_a_reference_variant_of_another_json_type_is_named_as_serde_names_it(
    member: str, value: object, kind: str
) -> None:
    text = _refusal("block", {member: value})
    assert text == f"Failed parsing args: invalid type: {kind}, expected variant identifier"


@pytest.mark.parametrize(
    ("reference", "rust"),
    [
        (BlockReference("sync_checkpoint", "genesis"), "SyncCheckpoint(Genesis)"),
        (BlockReference("sync_checkpoint", "earliest_available"), "SyncCheckpoint(EarliestAvailable)"),
        (BlockReference("finality", "optimistic"), "Finality(None)"),
        (BlockReference("finality", "near-final"), "Finality(DoomSlug)"),
        (BlockReference("finality", "final"), "Finality(Final)"),
        (BlockReference("block_id", 2**64 - 1), "BlockId(Height(18446744073709551615))"),
    ],
)
def test_references_print_with_nearcores_rust_names(reference: BlockReference, rust: str) -> None:
    assert reference.rust_debug() == rust
