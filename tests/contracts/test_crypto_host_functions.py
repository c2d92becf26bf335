"""The host functions nearcore added for hashing, signatures and the chain (near-vm-runner logic.rs;
imports.rs), run by WAT contracts on known vectors from their standards:
- sha3_256 / sha3_384 / sha3_512: FIPS 202's "abc" examples (NIST);
- ecrecover: go-ethereum's recovery vector (crypto/secp256k1 `TestRecoverSanity`), and nearcore's
  input errors with their texts;
- p256_verify: RFC 6979 A.2.5 (P-256, SHA-256, "sample"; its s is in the upper half, which
  nearcore accepts), a 33-byte compressed key, nearcore's input errors (tests/p256_verify.rs);
- ml_dsa_verify: ML-DSA-65 (FIPS 204) over a key from a fixed seed, nearcore's length texts
  (tests/ml_dsa_verify.rs);
- chain_id: the protocol config's chain id;
- validator_stake / validator_total_stake: the epoch's validators as the context gives them.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.asymmetric import mldsa

from nearrpc.contracts import HostFunctionUnavailable, ViewCallError
from tests.contracts.support import CONTEXT, COSTS, IMPORTS, module, run

MORE = """
 (import "env" "sha3_256" (func $sha3_256 (param i64 i64 i64)))
 (import "env" "sha3_384" (func $sha3_384 (param i64 i64 i64)))
 (import "env" "sha3_512" (func $sha3_512 (param i64 i64 i64)))
 (import "env" "ecrecover" (func $ecrecover (param i64 i64 i64 i64 i64 i64 i64) (result i64)))
 (import "env" "p256_verify" (func $p256_verify (param i64 i64 i64 i64 i64 i64) (result i64)))
 (import "env" "ml_dsa_verify" (func $ml_dsa_verify (param i64 i64 i64 i64 i64 i64) (result i64)))
 (import "env" "chain_id" (func $chain_id (param i64)))
 (import "env" "validator_stake" (func $validator_stake (param i64 i64 i64)))
 (import "env" "validator_total_stake" (func $validator_total_stake (param i64)))
"""


def _data(at: int, value: bytes) -> str:
    escaped = "".join(f"\\{byte:02x}" for byte in value)
    return f'(data (i32.const {at}) "{escaped}")'


def outcome(body: str, *inputs: bytes, **options: object) -> bytes | str:
    """The result of method `m` (inputs at 0, 4096, 8192, ...), or the error's Debug text."""
    data = " ".join(_data(4096 * i, value) for i, value in enumerate(inputs))
    code = module(f'{data} (func (export "m") {body})', IMPORTS + MORE, "(memory 2)")
    try:
        return run(code, "m", **options).result  # type: ignore[arg-type]
    except ViewCallError as failure:
        return failure.debug


RETURN_REGISTER_0 = "(call $read_register (i64.const 0) (i64.const 60000)) (call $value_return (call $register_len (i64.const 0)) (i64.const 60000))"  # noqa: E501


def return_u64(expr: str) -> str:
    return f"(i64.store (i32.const 60000) {expr}) (call $value_return (i64.const 8) (i64.const 60000))"


@pytest.mark.parametrize(
    ("name", "digest"),
    [
        ("sha3_256", "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"),
        (
            "sha3_384",
            "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25",
        ),
        (
            "sha3_512",
            "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e"
            "10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0",
        ),
    ],
)
def test_sha3(name: str, digest: str) -> None:
    assert outcome(f"(call ${name} (i64.const 3) (i64.const 0) (i64.const 0)) {RETURN_REGISTER_0}", b"abc") == (
        bytes.fromhex(digest)
    )


DIGEST = bytes.fromhex("ce0677bb30baa8cf067c88db9811f4333d131bf8bcf12fe7065d211dce971008")
SIGNATURE = bytes.fromhex(
    "90f27b8b488db00b00606796d2987f6a5f59ae62ea05effe84fef5b8b0e54998"
    "4a691139ad57a3f0b906637673aa2f63d1f55cb1a69199d4009eea23ceaddc93"
)
RECOVERED = bytes.fromhex(
    "e32df42865e97135acfb65f3bae71bdc86f4d49150ad6a440b6f15878109880a"
    "0a2b2667f7e725ceea70c673093bf67663e0312623c8e091b13cf2c0f11ef652"
)


def ecrecover(hash_len: int = 32, sig_len: int = 64, v: int = 1, flag: int = 0) -> str:
    call = f"(call $ecrecover (i64.const {hash_len}) (i64.const 0) (i64.const {sig_len}) (i64.const 4096) (i64.const {v}) (i64.const {flag}) (i64.const 0))"  # noqa: E501
    zero = "(call $value_return (i64.const 2) (i64.const 61000)) (return)"
    return f"(if (i64.eqz {call}) (then {zero})) {RETURN_REGISTER_0}"


def test_ecrecover_recovers_go_ethereums_vector() -> None:
    assert outcome(ecrecover(), DIGEST, SIGNATURE) == RECOVERED
    # the same signature with the other recovery id recovers another key, or none
    assert outcome(ecrecover(v=0), DIGEST, SIGNATURE) != RECOVERED


def test_ecrecover_refuses_invalid_values_with_zero() -> None:
    no_key = b"\x00\x00"  # what the module returns when ecrecover answers 0 (memory at 61000 is zero)
    zero_r = bytes(32) + SIGNATURE[32:]
    assert outcome(ecrecover(), DIGEST, zero_r)[:2] == no_key
    # s above n / 2 with the malleability flag
    n = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
    high_s = SIGNATURE[:32] + (n - int.from_bytes(SIGNATURE[32:], "big")).to_bytes(32, "big")
    assert outcome(ecrecover(flag=1), DIGEST, high_s)[:2] == no_key
    assert outcome(ecrecover(v=0), DIGEST, high_s) != b"\x00\x00"  # accepted without the flag


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"sig_len": 63}, "The length of the signature: 63, exceeds the limit of 64 bytes"),
        ({"v": 4}, "V recovery byte 0 through 3 are valid but was provided 4"),
        ({"hash_len": 31}, "The length of the hash: 31, exceeds the limit of 32 bytes"),
        ({"flag": 2}, "Malleability flag needs to be 0 or 1, but is instead 2"),
    ],
)
def test_ecrecover_input_errors(arguments: dict[str, int], message: str) -> None:
    assert outcome(ecrecover(**arguments), DIGEST, SIGNATURE) == f'HostError(ECRecoverError {{ msg: "{message}" }})'


# RFC 6979 A.2.5: P-256, key x = C9AFA9D8..., SHA-256, message "sample"
P256_KEY = bytes.fromhex("0360fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6")
P256_SIGNATURE = bytes.fromhex(
    "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716"
    "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"
)


def verify(name: str, sig_len: int, msg_len: int, key_len: int) -> str:
    call = f"(call ${name} (i64.const {sig_len}) (i64.const 0) (i64.const {msg_len}) (i64.const 8192) (i64.const {key_len}) (i64.const 16384))"  # noqa: E501
    return return_u64(call)


def answer(result: bytes | str) -> int | str:
    return result if isinstance(result, str) else int.from_bytes(result, "little")


def test_p256_verify_rfc6979_vector() -> None:
    assert answer(outcome(verify("p256_verify", 64, 6, 33), P256_SIGNATURE, b"", b"sample", b"", P256_KEY)) == 1
    assert answer(outcome(verify("p256_verify", 64, 6, 33), P256_SIGNATURE, b"", b"samplf", b"", P256_KEY)) == 0
    # a signature that does not parse (zeros), a key that is not a point
    assert answer(outcome(verify("p256_verify", 64, 6, 33), bytes(64), b"", b"sample", b"", P256_KEY)) == 0
    assert answer(outcome(verify("p256_verify", 64, 6, 33), P256_SIGNATURE, b"", b"sample", b"", bytes(33))) == 0


def test_p256_verify_input_errors() -> None:
    texts = {
        "signature": 'HostError(P256VerifyInvalidInput { msg: "invalid signature length" })',
        "key": 'HostError(P256VerifyInvalidInput { msg: "invalid public key length" })',
    }
    inputs = (P256_SIGNATURE, b"", b"sample", b"", P256_KEY)
    assert outcome(verify("p256_verify", 63, 6, 33), *inputs) == texts["signature"]
    assert outcome(verify("p256_verify", 64, 6, 32), *inputs) == texts["key"]


def test_ml_dsa_65_verify() -> None:
    private = mldsa.MLDSA65PrivateKey.from_seed_bytes(bytes(range(32)))
    public = private.public_key().public_bytes_raw()
    message = bytes([7]) * 32
    signature = private.sign(message)
    assert (len(signature), len(public)) == (3309, 1952)  # FIPS 204's sizes for ML-DSA-65
    inputs = (signature, b"", message, b"", public)
    body = verify("ml_dsa_verify", 3309, 32, 1952)
    assert answer(outcome(body, *inputs)) == 1
    tampered = (signature, b"", bytes([8]) * 32, b"", public)
    assert answer(outcome(body, *tampered)) == 0
    assert outcome(verify("ml_dsa_verify", 3308, 32, 1952), *inputs) == (
        'HostError(MlDsaVerifyInvalidInput { msg: "invalid signature length: expected the input of 3309 bytes, '
        'but 3308 was given" })'
    )
    assert outcome(verify("ml_dsa_verify", 3309, 32, 1951), *inputs) == (
        'HostError(MlDsaVerifyInvalidInput { msg: "invalid key length: expected the input of 1952 bytes, '
        'but 1951 was given" })'
    )


def test_chain_id_is_the_protocol_configs() -> None:
    assert outcome(f"(call $chain_id (i64.const 0)) {RETURN_REGISTER_0}") == b"nearrpc-localnet"
    assert outcome(f"(call $chain_id (i64.const 0)) {RETURN_REGISTER_0}", costs=replace(COSTS, chain_id="mainnet")) == (
        b"mainnet"
    )


class Stakes:
    def __init__(self, stakes: dict[str, int] | None) -> None:
        self._stakes = stakes

    def stakes(self) -> dict[str, int] | None:
        return self._stakes


STAKE_OF = "(call $validator_stake (i64.const {n}) (i64.const 0) (i64.const 60000)) (call $value_return (i64.const 16) (i64.const 60000))"  # noqa: E501
TOTAL = "(call $validator_total_stake (i64.const 60000)) (call $value_return (i64.const 16) (i64.const 60000))"


def test_validator_stakes_of_the_epoch() -> None:
    context = replace(CONTEXT, validators=Stakes({"alice.near": 10**30, "bob.near": 5}))
    assert outcome(STAKE_OF.format(n=10), b"alice.near", context=context) == (10**30).to_bytes(16, "little")
    assert outcome(STAKE_OF.format(n=9), b"carl.near", context=context) == bytes(16)  # no validator: zero
    assert outcome(TOTAL, context=context) == (10**30 + 5).to_bytes(16, "little")
    assert outcome(STAKE_OF.format(n=10), b"Alice.near", context=context) == "HostError(InvalidAccountId)"


def test_validators_the_store_lacks_are_answered_elsewhere() -> None:
    context = replace(CONTEXT, validators=Stakes(None))
    with pytest.raises(HostFunctionUnavailable):
        outcome(TOTAL, context=context)


def test_the_gas_entry_point_burns_regular_operations() -> None:
    # logic.rs `gas_seen_from_wasm` (imported as env.gas): opcodes * regular_op_cost, nothing else
    imported = '(import "env" "gas" (func $gas (param i32)))'

    def burnt(opcodes: int) -> int:
        return run(module(f'(func (export "m") (call $gas (i32.const {opcodes})))', IMPORTS + imported), "m").burnt_gas

    # two codes of one size (the loading fee is per byte): 1000 and 2000 take two LEB128 bytes each
    assert burnt(2000) - burnt(1000) == 1000 * COSTS.regular_op_cost


@pytest.mark.parametrize(
    "name",
    # nearcore's names of the curve operations (logic.rs `bls12381_impl!` and alt_bn128_*)
    [
        "alt_bn128_g1_multiexp", "alt_bn128_g1_sum", "bls12381_p1_sum", "bls12381_p2_sum", "bls12381_g1_multiexp",
        "bls12381_g2_multiexp", "bls12381_map_fp_to_g1", "bls12381_map_fp2_to_g2", "bls12381_p1_decompress",
        "bls12381_p2_decompress",
    ],
)  # fmt: skip
def test_the_curve_operations_link_and_are_answered_elsewhere_when_called(name: str) -> None:
    result = "" if name.startswith("alt_bn128") else " (result i64)"
    imported = f'(import "env" "{name}" (func $f (param i64 i64 i64){result}))'
    call = "(call $f (i64.const 0) (i64.const 0) (i64.const 0))"
    code = module(f'(func (export "m")) (func (export "n") {f"(drop {call})" if result else call})', IMPORTS + imported)
    assert run(code, "m").result == b""
    with pytest.raises(HostFunctionUnavailable):
        run(code, "n")
