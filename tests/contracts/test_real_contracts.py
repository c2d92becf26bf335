"""near-sdk-rs's own example contracts (the fungible token, the NFT, the status message; near-sdk 4
builds read from the reference folder) over state written in their storage layout by
bench.real_contracts_store, answered through a real `nearrpc serve`: each view's exact bytes are
the ones the plan it was written from says (a small store: 50 holders, 20 tokens)."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import httpx
import orjson
import pytest

from bench.real_contracts_store import FT, NFT, STATUS, NftToken, Shape, build_real_store, plan
from tests.conftest import reference_dir
from tests.support.live_server import running_server

SHAPE = Shape(holders=50, nfts=20, statuses=10)
CONTRACTS = plan(SHAPE)
HOLDERS = list(CONTRACTS.balances)
pytestmark = [pytest.mark.live, pytest.mark.reference]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = reference_dir() / "contracts"
    if not (folder / "new_non_fungible_token.wasm").is_file():
        pytest.skip(f"the example contracts are not in {folder} (set NEARRPC_REFERENCE_DIR)")
    store = tmp_path_factory.mktemp("real") / "real.sqlite"
    build_real_store(store, SHAPE, folder)
    with running_server(store, store.with_suffix(".log")) as live:
        yield live.url + "/"


def view(url: str, account_id: str, method: str, args: object) -> tuple[bytes, list[str]]:
    """A call_function at final: its result bytes and logs (a failure fails the test)."""
    params = {"request_type": "call_function", "account_id": account_id, "method_name": method,
              "args_base64": base64.b64encode(orjson.dumps(args)).decode(), "finality": "final"}  # fmt: skip
    answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "query", "params": params}, timeout=60)
    result = answer.json()["result"]
    assert "error" not in result, result["error"]
    return bytes(result["result"]), result["logs"]


def listing(tokens: list[NftToken]) -> bytes:
    return b"[" + b",".join(token.json() for token in tokens) + b"]"


def test_ft_balances_are_the_holders_written(url: str) -> None:
    named, implicit = HOLDERS[3], HOLDERS[4]  # one in five holders is a NEAR-implicit account
    assert len(implicit) == 64 and named.endswith(".localnet")
    for holder in (CONTRACTS.owner, named, implicit, HOLDERS[-1]):
        assert view(url, FT, "ft_balance_of", {"account_id": holder}) == (
            f'"{CONTRACTS.balances[holder]}"'.encode(),
            [],
        )
    # a member the contract does not read is skipped; an account never registered holds nothing
    assert (
        view(url, FT, "ft_balance_of", {"account_id": named, "nonce": "n1"})[0]
        == f'"{CONTRACTS.balances[named]}"'.encode()
    )
    assert view(url, FT, "ft_balance_of", {"account_id": "nobody.localnet"})[0] == b'"0"'


def test_ft_supply_metadata_and_storage_bounds(url: str) -> None:
    assert view(url, FT, "ft_total_supply", {})[0] == f'"{CONTRACTS.total_supply}"'.encode()
    assert view(url, FT, "ft_metadata", {})[0] == orjson.dumps(CONTRACTS.ft_metadata)
    # the root struct's account_storage_usage (125 bytes: a 64-character account's record) times
    # the byte cost of storage, 10^19 yoctoNEAR
    bounds = b'{"min":"1250000000000000000000","max":"1250000000000000000000"}'
    assert view(url, FT, "storage_balance_bounds", {})[0] == bounds
    assert view(url, FT, "storage_balance_of", {"account_id": HOLDERS[7]})[0] == (
        b'{"total":"1250000000000000000000","available":"0"}'
    )


def test_nft_token_and_pages_in_token_id_order(url: str) -> None:
    assert view(url, NFT, "nft_token", {"token_id": "7"})[0] == CONTRACTS.tokens[7].json()
    assert view(url, NFT, "nft_token", {"token_id": "20"})[0] == b"null"
    by_id = CONTRACTS.tokens_by_id
    assert [token.token_id for token in by_id[:4]] == ["0", "1", "10", "11"]  # a String's order, not a number's
    assert view(url, NFT, "nft_tokens", {"from_index": "3", "limit": 5})[0] == listing(by_id[3:8])
    assert view(url, NFT, "nft_tokens", {})[0] == listing(by_id)
    assert view(url, NFT, "nft_total_supply", {})[0] == b'"20"'
    assert view(url, NFT, "nft_metadata", {})[0] == orjson.dumps(CONTRACTS.nft_metadata)


def test_nft_tokens_per_owner_in_mint_order(url: str) -> None:
    owners = sorted({token.owner_id for token in CONTRACTS.tokens}, key=lambda o: -len(CONTRACTS.tokens_of(o)))
    most = owners[0]
    owned = CONTRACTS.tokens_of(most)
    assert len(owned) >= 3
    assert view(url, NFT, "nft_supply_for_owner", {"account_id": most})[0] == f'"{len(owned)}"'.encode()
    assert view(url, NFT, "nft_tokens_for_owner", {"account_id": most})[0] == listing(owned)
    page = {"account_id": most, "from_index": "1", "limit": 2}
    assert view(url, NFT, "nft_tokens_for_owner", page)[0] == listing(owned[1:3])
    assert view(url, NFT, "nft_supply_for_owner", {"account_id": "nobody.localnet"})[0] == b'"0"'


def test_status_messages_with_their_log(url: str) -> None:
    holder = HOLDERS[2]
    answer = view(url, STATUS, "get_status", {"account_id": holder})
    assert answer == (orjson.dumps(CONTRACTS.statuses[holder]), [f"get_status for account_id {holder}"])
    assert view(url, STATUS, "get_status", {"account_id": HOLDERS[10]})[0] == b"null"  # past the 10 with one
