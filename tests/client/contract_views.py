"""The view calls each published client makes on the sample chain's two contracts, and what each
must read: the values the contracts' stored state holds (tests.support.sample_facts), never a
value copied from an answer.

The contracts (service/sample/contracts/): the counter's `get_num` returns its count as a JSON
number (0 before the first write); the token's `ft_balance_of` / `ft_total_supply` return the u128
as a JSON string of digits, `ft_metadata` a constant NEP-148 object, and bad arguments panic with
near-sdk's text. A failed call is answered by `query` as a result whose `error` is nearcore's
message (runtime state_viewer call_function: "wasm execution failed with error: " and the VM's
FunctionCallError in Rust Debug form).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tests.support.sample_facts import sample_facts

# near-sdk's panic for arguments its serde cannot read (what ft.wat answers to `{}`)
BAD_ARGS_PANIC = "Failed to deserialize input from JSON."
MISSING_METHOD = "no_such_method"
METHOD_NOT_FOUND_MESSAGE = "wasm execution failed with error: MethodResolveError(MethodNotFound)"
PANIC_MESSAGE = f'wasm execution failed with error: HostError(GuestPanic {{ panic_msg: "{BAD_ARGS_PANIC}" }})'
# the metadata ft.wat returns, as near-contract-standards' FungibleTokenMetadata serializes it
FT_METADATA = {
    "spec": "ft-1.0.0", "name": "nearrpc Sample Token", "symbol": "NRS", "icon": None, "reference": None,
    "reference_hash": None, "decimals": 18,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class ContractViews:
    counter: str
    token: str
    holder: str  # an account whose token balance changes after genesis
    counts: tuple[tuple[int, int], ...]  # (height, get_num there): before and after the first writes
    balances: tuple[tuple[int, int], ...]  # (height, ft_balance_of holder): just before and at a change
    total_supply: int  # ft_total_supply at the final block
    final_height: int
    missing_account: str  # an account the chain never had


def _block_before(height: int) -> int:
    return max(h for h in sample_facts().block_heights if h < height)


def _count(counter: str, height: int) -> int:
    value = sample_facts().contract_value(counter, b"STATE", height)
    return 0 if value is None else int.from_bytes(value, "little", signed=True)


@cache
def contract_views() -> ContractViews:
    facts = sample_facts()
    counter, token = facts.contract_account, facts.token_account
    blocks = set(facts.block_heights)
    writes = [h for h in facts.contract_change_heights(counter, b"STATE") if h in blocks]
    count_heights = (_block_before(writes[0]), writes[0], writes[1])
    holder = "alice.localnet"
    key = b"b" + holder.encode()
    change = next(h for h in facts.contract_change_heights(token, key) if h > facts.genesis_height and h in blocks)

    def balance(height: int) -> int:
        value = facts.contract_value(token, key, height)
        return 0 if value is None else int.from_bytes(value, "little")

    supply = facts.contract_value(token, b"t", facts.final_height)
    assert supply is not None
    missing = "nobody-here.localnet"
    assert missing not in facts.all_accounts
    views = ContractViews(
        counter=counter,
        token=token,
        holder=holder,
        counts=tuple((h, _count(counter, h)) for h in count_heights),
        balances=tuple((h, balance(h)) for h in (_block_before(change), change)),
        total_supply=int.from_bytes(supply, "little"),
        final_height=facts.final_height,
        missing_account=missing,
    )
    # the heights tell states apart, or the test could not see a call answered at the wrong one
    assert len({count for _, count in views.counts}) == len(views.counts)
    assert views.balances[0][1] != views.balances[1][1]
    return views
