"""block through the published client, for every block reference form."""

from __future__ import annotations

import pytest
from near_jsonrpc_client import NearClientSync, RpcError

from tests.client.chain import REF_IDS, REFS, Ref, block_request, error_cause, hash_at, stored_block
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live


@pytest.mark.parametrize("ref", REFS, ids=REF_IDS)
def test_block_by_reference(near: NearClientSync, ref: Ref) -> None:
    facts = sample_facts()
    stored = stored_block(ref.height)
    block = near.block(params=block_request(ref))
    assert block.header.height == ref.height
    assert block.header.hash.root == hash_at(ref.height)
    assert block.header.prev_hash.root == stored["header"]["prev_hash"]
    assert block.header.epoch_id.root == facts.epoch_at(ref.height).epoch_id
    assert block.header.latest_protocol_version == stored["header"]["latest_protocol_version"]
    assert block.author.root == stored["author"]
    assert [chunk.shard_id.root for chunk in block.chunks] == list(facts.shard_ids)
    assert [chunk.chunk_hash.root for chunk in block.chunks] == [c["chunk_hash"] for c in stored["chunks"]]


def test_finalities_are_ordered(near: NearClientSync) -> None:
    facts = sample_facts()
    heights = {ref.value: near.block(params=block_request(ref)).header.height for ref in REFS if ref.kind == "finality"}
    assert heights == {
        "optimistic": facts.head_height,
        "near-final": facts.near_final_height,
        "final": facts.final_height,
    }
    assert heights["final"] <= heights["near-final"] <= heights["optimistic"]


@pytest.mark.parametrize("height", sample_facts().skipped_heights[:3])
def test_skipped_height_is_unknown_block(near: NearClientSync, height: int) -> None:
    with pytest.raises(RpcError) as raised:
        near.block(params=block_request(Ref("skipped", "block_id", height, height)))
    assert error_cause(raised.value.error).name == "UNKNOWN_BLOCK"
