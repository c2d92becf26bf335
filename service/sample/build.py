"""Writing the sample chain into a store."""

from __future__ import annotations

from functools import cache

from nearrpc.sample.generator import SampleChain, generate_sample_chain
from nearrpc.store import ChainWriter, StoreLocation, open_store


@cache
def sample_chain() -> SampleChain:
    """The sample chain, generated once per process (it is immutable)."""
    return generate_sample_chain()


def write_chain(writer: ChainWriter, chain: SampleChain) -> None:
    """Write the whole chain in one batch: it lands whole or not at all."""
    with writer.batch() as batch:
        batch.put_genesis_config(chain.genesis_config_json)
        batch.put_client_config(chain.client_config_json)
        for epoch in chain.epochs:
            batch.put_epoch(epoch)
        for block in chain.blocks:
            batch.put_block(block)
        for row in chain.account_states:
            batch.put_account_state(row.account_id, row.height, row.view_json)
        for key in chain.access_keys:
            batch.put_access_key(key.account_id, key.public_key, key.height, key.view_json)
        for code_hash, code in chain.contract_codes:
            batch.put_contract_code(code_hash, code)
        for data in chain.contract_data:
            batch.put_contract_data(data.account_id, data.key, data.height, data.value)
        for chunk in chain.chunks:
            batch.put_chunk(chunk)
        for transaction in chain.transactions:
            batch.put_transaction(transaction)
        for receipt in chain.receipts:
            batch.put_receipt(receipt)
        for validators in chain.validators:
            batch.put_validators(validators)


def build_sample_store(location: StoreLocation) -> None:
    """Write the sample chain into a new store at `location`, replacing any store there; a
    crash leaves either the old store or the new one, never a partial one."""
    with open_store(location, "replace") as writer:
        write_chain(writer, sample_chain())
