"""The plan of the sample chain: its parameters, accounts and scheduled events.

These are the generator's inputs. Everything tests may rely on is derived from the generated
data in `tests.support.sample_facts`, not read from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from nearrpc import sample_keys
from nearrpc.sample import crypto

NEAR = 10**24  # yoctoNEAR per NEAR

CHAIN_ID = "nearrpc-localnet"
TOP_LEVEL = "localnet"  # the chain's top-level account; named accounts live under it
GENESIS_HEIGHT = 0
# Genesis time with nanoseconds, as a node started with `neard init` writes it.
GENESIS_TIME = "2025-06-02T09:13:27.218765432Z"
EPOCH_LENGTH = 25
HEAD_HEIGHT = 110

# Genesis at 84 (nearcore 2.14 supports 84 and up); the upgrade then lands on 87 directly, as
# it does when every validator runs a 2.14 binary, so the head runs the newest stable protocol.
# 87 changes what the view shows (burnt_gas_reward, the ML-DSA and SHA-3 host functions) and the
# 85 diff in between changes more, so the upgrade is visible in runtime_config.
GENESIS_PROTOCOL_VERSION = 84
# What every header votes for: the binaries already run protocol 87.
LATEST_PROTOCOL_VERSION = 87
# A version voted for during epoch T takes effect in epoch T + 2 (the epoch after next is
# the first whose settings are not fixed yet when T ends).
UPGRADE_DELAY_EPOCHS = 2

MIN_GAS_PRICE = 100_000_000
MAX_GAS_PRICE = 10_000_000_000_000_000_000_000
GAS_LIMIT = 1_000_000_000_000_000
GAS_PRICE_ADJUSTMENT_RATE = (1, 100)
MAX_INFLATION_RATE = (1, 20)
PROTOCOL_REWARD_RATE = (1, 10)
NUM_BLOCKS_PER_YEAR = 31_536_000

# Heights at which no block was produced.
SKIPPED_HEIGHTS = frozenset({7, 18, 19, 33, 49, 64, 76, 88, 97})
# (height, shard index) whose chunk was not produced: the block carries the shard's previous
# chunk header and a false chunk_mask entry.
MISSING_CHUNKS = frozenset({(12, 2), (27, 0), (41, 1), (41, 3), (58, 2), (73, 0), (91, 1), (104, 3)})

SHARD_IDS = (0, 1, 2, 3)
BOUNDARY_ACCOUNTS = ("bob.localnet", "heidi.localnet", "olivia.localnet")
SHARD_LAYOUT_VERSION = 3

REGISTRAR = "registrar"
TREASURY = f"treasury.{TOP_LEVEL}"
VALIDATORS = ("node0", "node1", "node2", "node3")
VALIDATOR_STAKES = (52_000_000 * NEAR, 47_500_000 * NEAR, 41_250_000 * NEAR, 36_000_000 * NEAR)

CONTRACT = f"counter.{TOP_LEVEL}"
# The fungible-token contract's account (wasm.FT).
TOKEN = f"token.{TOP_LEVEL}"
GLOBAL_PUBLISHER = f"factory.{TOP_LEVEL}"
GLOBAL_BY_HASH_USER = f"dapp.{TOP_LEVEL}"
GLOBAL_BY_ACCOUNT_USER = f"widget.{TOP_LEVEL}"

NAMED = tuple(
    f"{name}.{TOP_LEVEL}"
    for name in (
        "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
        "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter",
        "wendy",
    )
)  # fmt: skip
SUB_ACCOUNTS = (f"wallet.alice.{TOP_LEVEL}", f"savings.bob.{TOP_LEVEL}", f"game.carol.{TOP_LEVEL}")


def implicit_key_label(index: int) -> str:
    """The label of the key pair whose public key's hex is the index-th implicit account's id."""
    return f"implicit:{index}"


def validator_key_label(validator: str) -> str:
    """The label of a validator's key pair (its validator key and its full-access key)."""
    return sample_keys.validator_key_label(validator)


# Named implicit accounts: the hex of an ed25519 public key (64 chars) or an Ethereum-style
# address (0x + 40 hex chars).
IMPLICIT = tuple(crypto.public_key_bytes(implicit_key_label(i)).hex() for i in range(18))
ETH_IMPLICIT = tuple("0x" + crypto.digest("eth-implicit", i)[:20].hex() for i in range(2))

# Exists at genesis, deleted mid-chain.
TEMP = f"temp.{TOP_LEVEL}"
# Created mid-chain and kept.
NEWCOMER = f"newcomer.{TOP_LEVEL}"
# Created mid-chain, deleted later.
EPHEMERAL = f"ephemeral.alice.{TOP_LEVEL}"

# Gas of the sample's actions (burnt in full, at the gas price of the including block).
TRANSFER_GAS = 446_365_125_000
# A function call's fees (nearcore's, the same to send and to execute): the action receipt's,
# the call's base, and per byte of method name and arguments; then the gas its contract uses.
ACTION_RECEIPT_GAS = 108_059_500_000
FUNCTION_CALL_BASE_GAS = 2_319_861_500_000
FUNCTION_CALL_BYTE_GAS = 2_235_934
CALL_PREPAID_GAS = 30_000_000_000_000  # what a call attaches; the unused part is refunded
MAX_PREPAID_GAS = 300_000_000_000_000  # nearcore's max_total_prepaid_gas
COUNTER_CALL_USED_GAS = 1_400_000_000_000  # an increment or decrement, give or take 0.1 Tgas
TOKEN_CALL_USED_GAS = 3_800_000_000_000  # an ft_transfer or storage_unregister, give or take 1 Tgas
CREATE_ACCOUNT_GAS = 4_174_947_687_500
DELETE_ACCOUNT_GAS = 1_349_413_818_750
STAKE_GAS = 1_057_417_500_000
ADD_KEY_GAS = 2 * (108_059_500_000 + 101_765_125_000)  # receipt + full-access AddKey, send and execution
DELETE_KEY_GAS = 2 * (108_059_500_000 + 94_946_625_000)

# Bytes: an account record plus one full-access key, what a fresh account uses.
BASE_STORAGE = 182
# What a full-access key adds: its borsh key (33) and AccessKey (9) and 40 extra bytes.
FULL_ACCESS_KEY_STORAGE = 82
# What each contract data record adds to its account's storage_usage besides its key and value
# bytes (nearcore's num_extra_bytes_record in the runtime config).
DATA_RECORD_EXTRA_BYTES = 40
GLOBAL_CONTRACT_ID_STORAGE = 32


@dataclass(frozen=True, slots=True)
class CreateAccount:
    height: int
    creator: str
    account_id: str
    deposit: int


@dataclass(frozen=True, slots=True)
class DeleteAccount:
    height: int
    account_id: str
    beneficiary: str


@dataclass(frozen=True, slots=True)
class Stake:
    height: int
    validator: str
    increase: int


CREATIONS = (
    CreateAccount(30, f"alice.{TOP_LEVEL}", EPHEMERAL, 5 * NEAR),
    CreateAccount(40, TOP_LEVEL, NEWCOMER, 25 * NEAR),
)
DELETIONS = (
    DeleteAccount(66, TEMP, f"bob.{TOP_LEVEL}"),
    DeleteAccount(90, EPHEMERAL, f"alice.{TOP_LEVEL}"),
)
STAKES = (Stake(57, "node2", 1_500_000 * NEAR),)


@dataclass(frozen=True, slots=True)
class KeyRotation:
    """An account adds a new full-access key (an AddKey signed by its old key) and later
    deletes the old one (a DeleteKey signed by the new key, which signs from then on)."""

    add_height: int
    delete_height: int
    account_id: str


KEY_ROTATIONS = (KeyRotation(52, 79, f"erin.{TOP_LEVEL}"),)

# Heights of a burst of heavy contract calls that fills the chunks of every shard and
# pushes the gas price up; it decays back to the minimum afterwards. A second, short burst at
# the top raises it again, so the final, near-final and head blocks each have their own price
# (a gas_price read at the wrong one of them answers another price).
BURST_HEIGHTS = frozenset(range(60, 69)) | {HEAD_HEIGHT - 1, HEAD_HEIGHT}
BURST_CALLERS = (
    f"alice.{TOP_LEVEL}",  # shard 0
    f"game.carol.{TOP_LEVEL}",  # shard 1
    f"mallory.{TOP_LEVEL}",  # shard 2
    f"sybil.{TOP_LEVEL}",  # shard 3
)
BURST_CALLS_PER_CHUNK = 3
BURST_CALL_GAS = 290_000_000_000_000  # what the contract uses of a burst call, less up to 19 Tgas
# Every COUNTER_PERIOD heights somebody calls the counter contract.
COUNTER_PERIOD = 6
COUNTER_CALLERS = (f"alice.{TOP_LEVEL}", f"bob.{TOP_LEVEL}", f"judy.{TOP_LEVEL}")

# The counter's calls: the n-th (from 1) decrements when n is a multiple of this, else increments.
COUNTER_DECREMENT_EVERY = 4

# The token (18 decimals): its supply, and the genesis balances of a few accounts; the token's
# own account holds the rest. Two of them exceed 2^64, so views print full u128 values.
TOKEN_UNIT = 10**18
TOKEN_SUPPLY = 10_000_000 * TOKEN_UNIT
TOKEN_HOLDERS = (
    (f"alice.{TOP_LEVEL}", 1_000_000 * TOKEN_UNIT),
    (f"bob.{TOP_LEVEL}", 250_000 * TOKEN_UNIT),
    (f"carol.{TOP_LEVEL}", 12_345_678_901_234_567_890),
)


@dataclass(frozen=True, slots=True)
class TokenTransfer:
    """An ft_transfer call (1 yoctoNEAR attached, as the standard requires), charged CALL_GAS."""

    height: int
    sender: str
    receiver: str
    amount: int


TOKEN_TRANSFERS = (
    TokenTransfer(22, f"alice.{TOP_LEVEL}", f"dave.{TOP_LEVEL}", 5_000 * TOKEN_UNIT),  # dave's first balance
    TokenTransfer(47, f"bob.{TOP_LEVEL}", f"alice.{TOP_LEVEL}", 1_250 * TOKEN_UNIT + 1),
    TokenTransfer(83, f"dave.{TOP_LEVEL}", f"carol.{TOP_LEVEL}", 5_000 * TOKEN_UNIT),  # dave's whole balance
    TokenTransfer(95, f"carol.{TOP_LEVEL}", f"bob.{TOP_LEVEL}", 345_678_901_234_567_890),
)
# storage_unregister calls (NEP-145, 1 yoctoNEAR attached): an account whose token balance is 0
# leaves the token, and its balance record is removed.
TOKEN_UNREGISTERS = ((100, f"dave.{TOP_LEVEL}"),)

# Accounts that send each other small transfers.
TRANSFER_POOL = NAMED + SUB_ACCOUNTS + IMPLICIT + ETH_IMPLICIT
