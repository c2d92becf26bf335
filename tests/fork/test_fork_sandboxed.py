"""A sandboxed fork (`serve --upstream URL --sandbox`) of another `nearrpc serve` over the sample
chain: a transfer and function calls of the sample's contracts (the counter's `increment`, which
reads and writes its storage; the token's `ft_transfer`, which the sample's token refuses by
design: its generator applies them) execute locally over the state fetched from the upstream at
the pinned head; the upstream is sent no transaction and asked nothing at a
height of the sandbox's; with the upstream stopped, the same requests to the same store answer
the same bytes."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Final

import httpx
import pytest

from nearrpc.nearcore.transaction import signed_transaction_bytes, transaction_bytes
from nearrpc.sample import crypto
from nearrpc.sample_keys import full_access_label
from tests.fork.upstream_proxy import UpstreamProxy, upstream_proxy
from tests.support.backends import BACKENDS
from tests.support.cli import nearrpc
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live]

ALICE, BOB, TOKEN, COUNTER = "alice.localnet", "bob.localnet", "token.localnet", "counter.localnet"
NEAR: Final = 10**24
_SENDS: Final = {"send_tx", "broadcast_tx_commit", "broadcast_tx_async"}


def rpc(url: str, method: str, params: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer: dict[str, Any] = httpx.post(url, json=body, timeout=60.0).json()
    return answer


def result(url: str, method: str, params: Any) -> Any:
    answer = rpc(url, method, params)
    assert "result" in answer, answer
    return answer["result"]


def signed(url: str, signer_id: str, receiver_id: str, actions: list[dict[str, Any]], nonce: int) -> str:
    """`signer_id`'s transaction (its sample full-access key), on the fork's head, base64."""
    label = full_access_label(signer_id)
    head = result(url, "block", {"finality": "optimistic"})["header"]["hash"]
    raw = transaction_bytes(signer_id=signer_id, public_key=crypto.public_key(label), nonce=nonce,
                            receiver_id=receiver_id, block_hash=head, actions=actions)  # fmt: skip
    return base64.b64encode(signed_transaction_bytes(raw, crypto.sign(label, hashlib.sha256(raw).digest()))).decode()


def signed_by_alice(url: str, receiver_id: str, actions: list[dict[str, Any]], nonce: int) -> str:
    return signed(url, ALICE, receiver_id, actions, nonce)


def next_nonce(url: str, account_id: str, block: dict[str, Any]) -> int:
    """The next nonce of the account's sample full-access key (asked of `url`)."""
    key = result(url, "query", {"request_type": "view_access_key", "account_id": account_id,
                                "public_key": crypto.public_key(full_access_label(account_id)), **block})  # fmt: skip
    return int(key["nonce"]) + 1


def balance(url: str, account_id: str, block: dict[str, Any]) -> int:
    return int(result(url, "query", {"request_type": "view_account", "account_id": account_id, **block})["amount"])


def tokens(url: str, account_id: str, block: dict[str, Any]) -> int:
    args = base64.b64encode(json.dumps({"account_id": account_id}).encode()).decode()
    answer = result(url, "query", {"request_type": "call_function", "account_id": TOKEN,
                                   "method_name": "ft_balance_of", "args_base64": args, **block})  # fmt: skip
    return int(json.loads(bytes(answer["result"]))) if answer["result"] else -1


def count(url: str, block: dict[str, Any]) -> int:
    answer = result(url, "query", {"request_type": "call_function", "account_id": COUNTER, "method_name": "get_num",
                                   "args_base64": "", **block})  # fmt: skip
    return int(bytes(answer["result"]))


def function_call(method_name: str, args: bytes, deposit: int) -> dict[str, Any]:
    return {"FunctionCall": {"method_name": method_name, "gas": 30 * 10**12, "deposit": str(deposit),
                             "args": base64.b64encode(args).decode()}}  # fmt: skip


def bodies(sent: list[str], height: int) -> list[bytes]:
    """The requests asked again offline: the sends themselves, their statuses, and reads at a
    block of the sandbox's."""
    at = {"block_id": height}
    calls: list[tuple[str, Any]] = [("broadcast_tx_commit", [tx]) for tx in sent]
    calls += [("EXPERIMENTAL_tx_status", {"signed_tx_base64": tx, "wait_until": "FINAL"}) for tx in sent]
    for account_id in (ALICE, BOB):
        calls.append(("query", {"request_type": "view_account", "account_id": account_id, **at}))
        args = base64.b64encode(json.dumps({"account_id": account_id}).encode()).decode()
        calls.append(("query", {"request_type": "call_function", "account_id": TOKEN, "method_name": "ft_balance_of",
                                "args_base64": args, **at}))  # fmt: skip
    calls.append(("query", {"request_type": "call_function", "account_id": COUNTER, "method_name": "get_num",
                            "args_base64": "", **at}))  # fmt: skip
    calls.append(("EXPERIMENTAL_view_access_key_list", {"account_id": ALICE, **at}))
    calls.append(("query", {"request_type": "view_state", "account_id": TOKEN, "prefix_base64": "", **at}))
    calls.append(("block", at))
    return [json.dumps({"jsonrpc": "2.0", "id": 7, "method": m, "params": p}).encode() for m, p in calls]


def answers(url: str, requests: list[bytes]) -> list[tuple[int, bytes]]:
    with httpx.Client(timeout=60.0) as client:
        return [
            (reply.status_code, reply.content)
            for body in requests
            for reply in [client.post(url, content=body, headers={"content-type": "application/json"})]
        ]


def final_height(url: str, expected: int) -> int:
    """The final height, once it is `expected` (or after 15 s): a sandbox that just started makes
    its head final with its first blocks while it serves."""
    deadline = time.monotonic() + 15.0
    while True:
        final = int(result(url, "block", {"finality": "final"})["header"]["height"])
        if final == expected or time.monotonic() > deadline:
            return final
        time.sleep(0.05)


def _fork(proxy: UpstreamProxy, store: Path | str, log: Path) -> AbstractContextManager[Served]:
    return serving("--store", store, "--upstream", proxy.url + "/", "--sandbox", log=log)


@pytest.mark.deep  # three servers or more: the upstream, the fork, its replay
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sandboxed_fork_executes_over_the_upstreams_state_then_replays_offline(
    backend: str, sample_store: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store: Path | str = tmp_path / "sandboxed.sqlite"
    if backend == "postgresql":
        store = request.getfixturevalue("postgres").create_database("sandboxed")
    with serving("--store", sample_store, log=tmp_path / "upstream.log") as upstream:
        with upstream_proxy(upstream.url + "/") as proxy:
            upstream_final = result(upstream.url, "block", {"finality": "final"})["header"]["height"]
            with _fork(proxy, store, tmp_path / "fork.log") as fork:
                url = fork.url
                pin = {"block_id": upstream_final}
                # the pin is the upstream's final head, made final by the fork's first blocks above it
                assert final_height(url, upstream_final) == upstream_final
                assert result(url, "block", {"finality": "optimistic"})["header"]["height"] > upstream_final
                before = {a: balance(url, a, pin) for a in (ALICE, BOB)}
                tokens_before = {a: tokens(url, a, pin) for a in (ALICE, BOB)}
                assert tokens_before[BOB] > 0  # the sample's token, its state read from the upstream
                counted = count(url, pin)

                label = f"full-access:{ALICE}"
                key = result(url, "query", {"request_type": "view_access_key", "finality": "final",
                                            "account_id": ALICE, "public_key": crypto.public_key(label)})  # fmt: skip
                transfer = signed_by_alice(url, BOB, [{"Transfer": {"deposit": str(2 * NEAR)}}], key["nonce"] + 1)
                sent = [transfer]
                outcome = result(url, "broadcast_tx_commit", [transfer])
                assert "SuccessValue" in outcome["status"], outcome
                increment = signed_by_alice(url, COUNTER, [function_call("increment", b"", 0)], key["nonce"] + 2)
                sent.append(increment)
                outcome = result(url, "broadcast_tx_commit", [increment])
                assert "SuccessValue" in outcome["status"], outcome
                ft_args = b'{"receiver_id":"bob.localnet","amount":"1000"}'
                ft = signed_by_alice(url, TOKEN, [function_call("ft_transfer", ft_args, 1)], key["nonce"] + 3)
                sent.append(ft)
                outcome = result(url, "broadcast_tx_commit", [ft])
                error = outcome["status"]["Failure"]["ActionError"]["kind"]["FunctionCallError"]["ExecutionError"]
                assert error.startswith("Smart contract panicked: ft_transfer is applied by the sample"), outcome

                final = {"finality": "final"}
                assert balance(url, BOB, final) == before[BOB] + 2 * NEAR
                assert balance(url, ALICE, final) < before[ALICE] - 2 * NEAR  # and the fees
                assert count(url, final) == counted + 1
                assert count(upstream.url, final) == counted
                assert tokens(url, BOB, final) == tokens_before[BOB]  # the panic changed nothing
                # the upstream still holds its own state: nothing was sent to it
                assert balance(upstream.url, BOB, final) == before[BOB]

                height = result(url, "block", final)["header"]["height"]
                requests = bodies(sent, height)
                online = answers(url, requests)
                asked = proxy.requests()
            # no transaction reached the upstream, nor a question at a height of the sandbox's
            methods = {line.split(" ", 1)[0] for line in asked}
            assert not methods & _SENDS, methods
            for line in asked:
                params = json.loads(line.split(" ", 1)[1])
                block_id = params.get("block_id") if isinstance(params, dict) else None
                assert not isinstance(block_id, int) or block_id <= upstream_final, line
    # the upstream is stopped: the same requests, answered from what the fork kept
    assert all(status == 200 for status, _ in online), online
    with _fork(proxy, store, tmp_path / "replay.log") as fork:
        offline = answers(fork.url, requests)
    differing = [
        f"{requests[i]!r}: {offline[i]!r} != {online[i]!r}" for i in range(len(requests)) if offline[i] != online[i]
    ]
    if differing:
        pytest.fail("\n".join(differing))


def test_a_forked_account_with_contract_state_is_deleted_whole(upstream: Served, proxy: UpstreamProxy,
                                                               tmp_path: Path) -> None:  # fmt: skip
    """DeleteAccount walks the account's every storage key: the forked counter's state is listed
    from the upstream once, at the pin, and removed above it; the upstream still holds it."""
    with _fork(proxy, tmp_path / "deleted.sqlite", tmp_path / "fork.log") as fork:
        final = {"finality": "final"}
        pinned = result(upstream.url, "block", final)["header"]  # the pin: the upstream's final block
        pin = pinned["height"]
        nonce = next_nonce(fork.url, COUNTER, final)
        delete = signed(fork.url, COUNTER, COUNTER, [{"DeleteAccount": {"beneficiary_id": ALICE}}], nonce)
        outcome = result(fork.url, "broadcast_tx_commit", [delete])
        assert "SuccessValue" in outcome["status"], outcome
        gone = rpc(fork.url, "query", {"request_type": "view_account", "account_id": COUNTER, **final})
        assert gone["error"]["cause"]["name"] == "UNKNOWN_ACCOUNT", gone
        listed = {"request_type": "view_state", "account_id": COUNTER, "prefix_base64": ""}
        before = result(fork.url, "query", {**listed, "block_id": pin})["values"]
        assert before and before == result(upstream.url, "query", {**listed, "block_id": pin})["values"]
        assert count(upstream.url, final) == count(fork.url, {"block_id": pin})
        asked = proxy.requests()
    whole = [r for r in asked if r.startswith("query ") and '"view_state"' in r and '"prefix_base64": ""' in r]
    assert len(whole) == 1, asked  # the listing is fetched once, at the pin
    assert f'"block_id": "{pinned["hash"]}"' in whole[0], whole


def test_a_send_whose_state_cannot_be_fetched_fails_and_the_chain_goes_on(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """The upstream down, or a state view's fetch budget spent: the send answers INTERNAL_ERROR
    within the miss timeout, saying why, and the chain writer serves the next send."""
    carol, dave = "carol.localnet", "dave.localnet"
    flags = ("--miss-timeout", "2", "--upstream-retries", "0", "--fork-fetches-per-call", "1")
    with serving("--store", tmp_path / "faults.sqlite", "--upstream", proxy.url + "/", "--sandbox", *flags,
                 log=tmp_path / "fork.log") as fork:  # fmt: skip
        pin = {"block_id": result(upstream.url, "block", {"finality": "final"})["header"]["height"]}
        transfer = [{"Transfer": {"deposit": str(NEAR)}}]
        # carol's account and key: two fetches, where a state view may make one
        send = signed(fork.url, carol, ALICE, transfer, next_nonce(upstream.url, carol, pin))
        refused = rpc(fork.url, "broadcast_tx_commit", [send])
        assert refused["error"]["cause"]["name"] == "INTERNAL_ERROR", refused
        assert "--fork-fetches-per-call" in json.dumps(refused), refused
        # what a send fetched is kept: the next ones, one fetch each, complete it (carol's account and
        # key, alice's account: the receiver's)
        for _ in range(2):
            answer = rpc(fork.url, "broadcast_tx_commit", [send])
        assert "SuccessValue" in answer["result"]["status"], answer

        proxy.down = True
        started = time.monotonic()
        send = signed(fork.url, dave, ALICE, transfer, next_nonce(upstream.url, dave, pin))
        failed = rpc(fork.url, "broadcast_tx_commit", [send])
        assert failed["error"]["cause"]["name"] == "INTERNAL_ERROR", failed
        assert time.monotonic() - started < 10.0
        proxy.down = False
        # the chain writer was never held: alice's state is kept, her send needs nothing upstream
        nonce = next_nonce(fork.url, ALICE, {"finality": "final"})
        proxy.down = True
        # the receiver's account is fetched at the send too: the send is refused, nothing is charged
        refused = rpc(fork.url, "broadcast_tx_commit", [signed_by_alice(fork.url, "erin.localnet", transfer, nonce)])
        assert refused["error"]["cause"]["name"] == "INTERNAL_ERROR", refused
        outcome = result(fork.url, "broadcast_tx_commit", [signed_by_alice(fork.url, carol, transfer, nonce)])
        assert "SuccessValue" in outcome["status"], outcome
        proxy.down = False


@pytest.mark.deep  # three servers or more: the upstream, the fork, its replay
def test_a_sandboxed_forks_pin_is_kept_in_its_store(upstream: Served, proxy: UpstreamProxy, tmp_path: Path) -> None:
    """Started again, a sandboxed fork's store pins the same height (its blocks are above it);
    a store holding blocks above a new pin is refused."""
    store = tmp_path / "pinned.sqlite"
    with _fork(proxy, store, tmp_path / "fork.log") as fork:
        pin = result(upstream.url, "block", {"finality": "final"})["header"]["height"]  # the pin
        assert final_height(fork.url, pin) == pin
    assert pin > 10
    with _fork(proxy, store, tmp_path / "again.log") as fork:  # no --fork-height: the kept one
        assert f"pinned at {pin}" in fork.started_line
    with serving("--store", store, "--sandbox", log=tmp_path / "alone.log") as alone:  # said once, and served
        assert f"holds a sandboxed fork pinned at {pin}: without --upstream" in alone.log.read_text()
    flags = ("--upstream", proxy.url + "/", "--sandbox", "--fork-height", str(pin - 5))
    done = nearrpc("serve", "--port", "0", "--store", store, *flags)
    assert done.returncode == 2 and f"this store's sandbox is pinned at {pin}" in done.stderr, done.stderr
    plain = tmp_path / "plain.sqlite"
    with serving(
        "--store", plain, "--upstream", proxy.url + "/", "--fork-height", str(pin), log=tmp_path / "plain.log"
    ):
        pass  # a fork pinned at the upstream's final head keeps that block
    done = nearrpc("serve", "--port", "0", "--store", plain, *flags)
    assert done.returncode == 2 and f"holds blocks up to {pin} already" in done.stderr, done.stderr


def view_call(url: str, account_id: str, method_name: str, args: dict[str, Any]) -> Any:
    """A contract's JSON answer at the final block."""
    args_base64 = base64.b64encode(json.dumps(args).encode()).decode() if args else ""
    answer = result(url, "query", {"request_type": "call_function", "account_id": account_id, "finality": "final",
                                   "method_name": method_name, "args_base64": args_base64})  # fmt: skip
    return json.loads(bytes(answer["result"]))


def sent_and_succeeded(url: str, signer_id: str, receiver_id: str, actions: list[dict[str, Any]]) -> dict[str, Any]:
    nonce = next_nonce(url, signer_id, {"finality": "final"})
    outcome: dict[str, Any] = result(url, "broadcast_tx_commit", [signed(url, signer_id, receiver_id, actions, nonce)])
    assert "SuccessValue" in outcome["status"], outcome
    return outcome


@pytest.mark.deep  # three servers or more: the upstream, the fork, its replay
def test_a_live_near_sdk_token_is_copied_by_calling_it(sample_store: Path, reference: Path, tmp_path: Path) -> None:
    """near-sdk-rs's fungible token, deployed and initialised on a live chain (here another
    `serve --sandbox`), runs in a sandboxed fork of it as on the chain: bob's storage_deposit and
    alice's ft_transfer, over the token's state fetched at the pin; the live chain is unchanged."""
    code = (reference / "contracts" / "new_fungible_token.wasm").read_bytes()
    token = "dave.localnet"  # an account of the sample, its key known
    live_store = tmp_path / "live.sqlite"
    shutil.copyfile(sample_store, live_store)
    with serving("--store", live_store, "--sandbox", log=tmp_path / "live.log") as live:
        init = function_call("new_default_meta", b'{"owner_id":"alice.localnet","total_supply":"1000000"}', 0)
        sent_and_succeeded(
            live.url, token, token, [{"DeployContract": {"code": base64.b64encode(code).decode()}}, init]
        )
        with (
            upstream_proxy(live.url + "/") as proxy,
            _fork(proxy, tmp_path / "copy.sqlite", tmp_path / "f.log") as fork,
        ):
            minimum = int(view_call(fork.url, token, "storage_balance_bounds", {})["min"])
            deposit = function_call("storage_deposit", b'{"account_id":"bob.localnet"}', minimum)
            sent_and_succeeded(fork.url, BOB, token, [deposit])
            transfer = function_call("ft_transfer", b'{"receiver_id":"bob.localnet","amount":"250"}', 1)
            outcome = sent_and_succeeded(fork.url, ALICE, token, [transfer])
            assert "ft_transfer" in json.dumps(outcome["receipts_outcome"])  # the token's NEP-141 event log
            balances = [view_call(url, token, "ft_balance_of", {"account_id": a}) for url in (fork.url, live.url)
                        for a in (ALICE, BOB)]  # fmt: skip
            assert balances == ["999750", "250", "1000000", "0"]
            methods = {request.split(" ", 1)[0] for request in proxy.requests()}
        assert not methods & _SENDS, methods


def test_what_the_sandbox_wrote_is_never_fetched(upstream: Served, proxy: UpstreamProxy, tmp_path: Path) -> None:
    """A storage key sandbox_patch_state wrote is the sandbox's: a view call and a function call
    read it from the store, and the upstream is never asked for the counter's state."""
    with _fork(proxy, tmp_path / "patched.sqlite", tmp_path / "fork.log") as fork:
        state = {"Data": {"account_id": COUNTER, "data_key": base64.b64encode(b"STATE").decode(),
                          "value": base64.b64encode((41).to_bytes(8, "little", signed=True)).decode()}}  # fmt: skip
        assert result(fork.url, "sandbox_patch_state", {"records": [state]}) == {}
        final = {"finality": "final"}
        assert count(fork.url, final) == 41
        sent_and_succeeded(fork.url, ALICE, COUNTER, [function_call("increment", b"", 0)])
        assert count(fork.url, final) == 42
        asked = proxy.requests()
    assert not [r for r in asked if '"view_state"' in r and COUNTER in r], asked
    assert [r for r in asked if r.startswith("EXPERIMENTAL_view_code ")], asked  # its code is the upstream's


def test_without_a_store_a_sandboxed_fork_keeps_its_state_in_a_temporary_one(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    with serving("--upstream", proxy.url + "/", "--sandbox", log=tmp_path / "fork.log") as fork:
        assert "nearrpc-sandbox-" in fork.started_line  # the temporary folder, removed at the end
        said = httpx.get(f"{fork.url}/status").json()["nearrpc"]["fork"]
        assert said["sandboxed"] is True and said["head"] == "the sandbox's, above the pinned height", said
        final = {"finality": "final"}
        nonce = next_nonce(fork.url, ALICE, final)
        outcome = result(
            fork.url, "broadcast_tx_commit", [signed_by_alice(fork.url, BOB, [{"Transfer": {"deposit": "1"}}], nonce)]
        )
        assert "SuccessValue" in outcome["status"], outcome


def test_a_receipt_whose_state_cannot_be_fetched_is_dropped_and_blocks_go_on(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """Checked and queued with the upstream up, its block made with the upstream down: the call's
    storage cannot be fetched, so the transaction is left out (as a dropped one: TIMEOUT_ERROR),
    promptly, and the chain goes on making blocks."""
    flags = ("--block-time", "1", "--miss-timeout", "2", "--upstream-retries", "0")
    with serving("--store", tmp_path / "dropped.sqlite", "--upstream", proxy.url + "/", "--sandbox", *flags,
                 log=tmp_path / "fork.log") as fork:  # fmt: skip
        nonce = next_nonce(fork.url, ALICE, {"finality": "final"})
        increment = signed_by_alice(fork.url, COUNTER, [function_call("increment", b"", 0)], nonce)
        tx_hash = result(fork.url, "broadcast_tx_async", [increment])  # checked: alice's state and the counter's code
        proxy.down = True
        started = time.monotonic()
        status = rpc(fork.url, "tx", {"tx_hash": tx_hash, "sender_account_id": ALICE, "wait_until": "FINAL"})
        assert status["error"]["cause"]["name"] == "TIMEOUT_ERROR", status
        height = result(fork.url, "block", {"finality": "optimistic"})["header"]["height"]
        time.sleep(2.5)
        assert result(fork.url, "block", {"finality": "optimistic"})["header"]["height"] > height
        assert time.monotonic() - started < 15.0
        proxy.down = False
    # the operator reads why in one line, not a traceback (the fetch's failure is no defect)
    logged = (tmp_path / "fork.log").read_text()
    assert "the runtime failed applying block" in logged and "Traceback" not in logged
