"""EXPERIMENTAL_protocol_config through the published client, for every block reference form."""

from __future__ import annotations

import pytest
from near_jsonrpc_client import NearClientSync, RpcError

from tests.client.chain import REF_IDS, REFS, Ref, error_cause, protocol_config_request
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live


@pytest.mark.parametrize("ref", REFS, ids=REF_IDS)
def test_protocol_config_by_reference(near: NearClientSync, ref: Ref) -> None:
    facts = sample_facts()
    config = near.experimental_protocol_config(params=protocol_config_request(ref))
    assert config.protocol_version == facts.epoch_at(ref.height).protocol_version
    assert config.chain_id == facts.chain_id
    assert config.genesis_height == facts.genesis_height
    assert config.epoch_length == facts.epoch_length
    assert config.runtime_config is not None


def test_protocol_version_changes_at_the_upgrade(near: NearClientSync) -> None:
    """Epochs before the upgrade answer the genesis version, epochs after it the newest one."""
    facts = sample_facts()
    by_epoch = {
        epoch.index: near.experimental_protocol_config(
            params=protocol_config_request(Ref("epoch", "block_id", epoch.first_height, epoch.first_height))
        ).protocol_version
        for epoch in facts.epochs
    }
    assert by_epoch == {epoch.index: epoch.protocol_version for epoch in facts.epochs}
    assert by_epoch[0] == facts.genesis_protocol_version
    assert by_epoch[len(facts.epochs) - 1] == max(facts.protocol_versions)
    assert len(set(by_epoch.values())) == len(facts.protocol_versions) > 1


def test_skipped_height_is_unknown_block(near: NearClientSync) -> None:
    height = sample_facts().skipped_heights[0]
    with pytest.raises(RpcError) as raised:
        near.experimental_protocol_config(params=protocol_config_request(Ref("skipped", "block_id", height, height)))
    assert error_cause(raised.value.error).name == "UNKNOWN_BLOCK"
