"""Each refusal of nearcore's verifier (runtime/runtime/src/verifier.rs, action_validation.rs) with
the exact InvalidTxError JSON nearcore answers, held to the spec's InvalidTxError schema; and what
an accepted transaction charges."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import based58
import pytest

from nearrpc.sandbox.runtime import decode, encode, fees, model, verifier
from nearrpc.spec import validate_component
from tests.sandbox.support import ed25519_secret, protocol_config, runtime_config, transaction

CONFIG = fees.FeeConfig.from_runtime_config(runtime_config())
LIMITS = CONFIG.limits
VERSION = protocol_config()["protocol_version"]
GAS_PRICE = 10**8
NEAR = 10**24
HEIGHT = 500

ALICE = ed25519_secret("alice")
ALICE_KEY = encode.public_key_of(ALICE)
CALLER = ed25519_secret("caller")
CALLER_KEY = encode.public_key_of(CALLER)
CALL_PERMISSION = model.FunctionCallPermission(
    allowance=NEAR, receiver_id="token.localnet", method_names=("ft_transfer",)
)


@dataclass
class State:
    """A StateView over dicts."""

    accounts: dict[str, model.Account] = field(default_factory=dict)
    keys: dict[tuple[str, str], model.AccessKey] = field(default_factory=dict)

    def account(self, account_id: str) -> model.Account | None:
        return self.accounts.get(account_id)

    def access_key(self, account_id: str, public_key: str) -> model.AccessKey | None:
        return self.keys.get((account_id, public_key))

    def access_keys(self, account_id: str) -> list[tuple[str, model.AccessKey]]:
        return [(key, value) for (owner, key), value in self.keys.items() if owner == account_id]

    def code(self, code_hash: str) -> bytes | None:
        return None

    def storage_read(self, account_id: str, key: bytes) -> bytes | None:
        return None

    def storage_keys(self, account_id: str) -> Iterator[bytes]:
        return iter(())


def state(amount: int = 100 * NEAR, storage_usage: int = 182) -> State:
    return State(
        accounts={
            "alice.localnet": model.Account(
                amount=amount, locked=0, code_hash=model.NO_CODE_HASH, storage_usage=storage_usage
            )
        },
        keys={
            ("alice.localnet", ALICE_KEY): model.AccessKey(nonce=10, permission=None),
            ("alice.localnet", CALLER_KEY): model.AccessKey(nonce=10, permission=CALL_PERMISSION),
        },
    )


def signed(*actions: model.Action, secret: str = ALICE, **fields: Any) -> model.SignedTransaction:
    tx = transaction(encode.public_key_of(secret), *actions, nonce=fields.pop("nonce", 11), **fields)
    return decode.decode_signed_transaction(encode.sign_transaction(tx, secret))


def refusal(tx: model.SignedTransaction, world: State | None = None, *, config: fees.FeeConfig = CONFIG) -> Any:
    with pytest.raises(model.TransactionRefused) as refused:
        verifier.check_transaction(
            world or state(), config, tx, gas_price=GAS_PRICE, protocol_version=VERSION, block_height=HEIGHT
        )
    validate_component("InvalidTxError", refused.value.error)
    return refused.value.error


def actions_refusal(*actions: model.Action) -> Any:
    error = refusal(signed(*actions))
    assert list(error) == ["ActionsValidation"]
    return error["ActionsValidation"]


def call(method: str = "ft_transfer", args: bytes = b"{}", gas: int = 10**13, deposit: int = 0) -> model.FunctionCall:
    return model.FunctionCall(method_name=method, args=args, gas=gas, deposit=deposit)


# the block the transaction names


def test_an_unknown_block_hash_has_expired() -> None:
    with pytest.raises(model.TransactionRefused) as refused:
        verifier.check_validity_period(None, HEIGHT, 100)
    assert refused.value.error == "Expired"


def test_a_block_past_the_validity_period_has_expired() -> None:
    verifier.check_validity_period(HEIGHT - 100, HEIGHT, 100)  # the last height still valid
    with pytest.raises(model.TransactionRefused) as refused:
        verifier.check_validity_period(HEIGHT - 101, HEIGHT, 100)
    assert refused.value.error == "Expired"
    validate_component("InvalidTxError", refused.value.error)


def test_a_block_above_the_head_is_on_another_chain() -> None:
    with pytest.raises(model.TransactionRefused) as refused:
        verifier.check_validity_period(HEIGHT + 1, HEIGHT, 100)
    assert refused.value.error == "InvalidChain"


# stateless: validate_transaction


def test_a_forged_signature() -> None:
    good = signed(model.Transfer(1))
    assert refusal(replace(good, signature=signed(model.Transfer(2)).signature)) == "InvalidSignature"


def test_a_transaction_past_the_size_limit() -> None:
    limit = int(LIMITS["max_transaction_size"])
    tx = signed(call(args=bytes(limit)))
    assert refusal(tx) == {"TransactionSizeExceeded": {"size": tx.size, "limit": limit}}
    # before protocol 85 the signature is not counted
    assert verifier.size_for_limits(tx, 84) == tx.size - 65


def test_actions_are_checked_before_the_size_and_the_signature() -> None:
    too_many = [model.Transfer(1)] * (int(LIMITS["max_actions_per_receipt"]) + 1)
    forged = replace(signed(*too_many), signature="ed25519:" + "1" * 64)
    assert list(refusal(forged)["ActionsValidation"]) == ["TotalNumberOfActionsExceeded"]


def test_too_many_actions() -> None:
    limit = int(LIMITS["max_actions_per_receipt"])
    assert actions_refusal(*[model.CreateAccount()] * (limit + 1)) == {
        "TotalNumberOfActionsExceeded": {"total_number_of_actions": limit + 1, "limit": limit}
    }


def test_too_many_deploys() -> None:
    limit = int(LIMITS["max_deploy_actions_per_receipt"])
    assert actions_refusal(*[model.DeployContract(b"\x00asm")] * (limit + 1)) == {
        "TotalNumberOfDeployActionsExceeded": {"number_of_deploy_actions": limit + 1, "limit": limit}
    }


def test_delete_account_must_be_last() -> None:
    assert actions_refusal(model.DeleteAccount("bob.localnet"), model.Transfer(1)) == "DeleteActionMustBeFinal"


def delegate(*actions: model.NonDelegateAction, receiver_id: str = "token.localnet") -> model.Delegate:
    inner = model.DelegateAction("alice.localnet", receiver_id, actions, 1, HEIGHT + 100, ALICE_KEY)
    return encode.sign_delegate_action(inner, ALICE)


def test_one_delegate_per_transaction() -> None:
    assert actions_refusal(delegate(), delegate()) == "DelegateActionMustBeOnlyOne"


def test_a_delegates_inner_actions_are_checked() -> None:
    assert actions_refusal(delegate(call(gas=0))) == "FunctionCallZeroAttachedGas"


def test_a_contract_past_the_size_limit() -> None:
    limit = int(LIMITS["max_contract_size"])
    config = replace(CONFIG, limits={**LIMITS, "max_transaction_size": 2 * limit})
    error = refusal(signed(model.DeployContract(bytes(limit + 1))), config=config)
    assert error == {"ActionsValidation": {"ContractSizeExceeded": {"size": limit + 1, "limit": limit}}}


def test_function_call_limits() -> None:
    assert actions_refusal(call(gas=0)) == "FunctionCallZeroAttachedGas"
    name_limit = int(LIMITS["max_length_method_name"])
    assert actions_refusal(call("m" * (name_limit + 1))) == {
        "FunctionCallMethodNameLengthExceeded": {"length": name_limit + 1, "limit": name_limit}
    }
    args_limit = 1000
    config = replace(CONFIG, limits={**LIMITS, "max_arguments_length": args_limit})
    error = refusal(signed(call(args=bytes(args_limit + 1))), config=config)
    assert error == {
        "ActionsValidation": {"FunctionCallArgumentsLengthExceeded": {"length": args_limit + 1, "limit": args_limit}}
    }


def test_a_function_call_names_a_method_from_protocol_87() -> None:
    # RejectEmptyMethodName (87): the variant the spec's ActionsValidationError gains by the
    # overlay wire-empty-method-name (refusal() holds the error to the spec's InvalidTxError)
    assert refusal(signed(call(""))) == {"ActionsValidation": "FunctionCallEmptyMethodName"}
    tx = signed(call(""), receiver_id="token.localnet")
    verifier.validate_transaction(CONFIG, tx, 86)


def test_an_unsuitable_staking_key() -> None:
    torsion = (
        "ed25519:"
        + based58.b58encode(
            bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")  # a point of order 8
        ).decode()
    )
    assert actions_refusal(model.Stake(NEAR, torsion)) == {"UnsuitableStakingKey": {"public_key": torsion}}
    secp = encode.public_key_of("secp256k1:" + based58.b58encode(bytes(31) + b"\x07").decode())
    # a secp256k1 key in the answer: the spec's PublicKey admits it (wire-public-key-syntax)
    error = refusal(signed(model.Stake(NEAR, secp)))
    assert error == {"ActionsValidation": {"UnsuitableStakingKey": {"public_key": secp}}}


def add_key(permission: model.FunctionCallPermission) -> model.AddKey:
    return model.AddKey(public_key=CALLER_KEY, access_key=model.AccessKey(nonce=0, permission=permission))


def test_function_call_key_limits() -> None:
    bad_receiver = model.FunctionCallPermission(None, "Not An Account" * 20, ())
    assert actions_refusal(add_key(bad_receiver)) == {"InvalidAccountId": {"account_id": ("Not An Account" * 20)[:128]}}
    name_limit = int(LIMITS["max_length_method_name"])
    long_name = model.FunctionCallPermission(None, "token.localnet", ("m" * (name_limit + 1),))
    assert actions_refusal(add_key(long_name)) == {
        "AddKeyMethodNameLengthExceeded": {"length": name_limit + 1, "limit": name_limit}
    }
    bytes_limit = int(LIMITS["max_number_bytes_method_names"])
    count = bytes_limit // 100 + 1
    many = model.FunctionCallPermission(None, "token.localnet", tuple("m" * 99 for _ in range(count)))
    assert actions_refusal(add_key(many)) == {
        "AddKeyMethodNamesNumberOfBytesExceeded": {"total_number_of_bytes": 100 * count, "limit": bytes_limit}
    }


def test_prepaid_gas_limits() -> None:
    limit = int(LIMITS["max_total_prepaid_gas"])
    assert actions_refusal(call(gas=limit), call(gas=1)) == {
        "TotalPrepaidGasExceeded": {"total_prepaid_gas": limit + 1, "limit": limit}
    }
    assert actions_refusal(call(gas=2**63), call(gas=2**63)) == "IntegerOverflow"


# with the state: verify_and_charge_transaction


def test_a_cost_past_u128() -> None:
    assert refusal(signed(model.Transfer(2**127), model.Transfer(2**127))) == "CostOverflow"


def test_an_unknown_signer() -> None:
    tx = signed(model.Transfer(1), signer_id="nobody.localnet")
    assert refusal(tx) == {"SignerDoesNotExist": {"signer_id": "nobody.localnet"}}


def test_an_unknown_key() -> None:
    stranger = ed25519_secret("stranger")
    assert refusal(signed(model.Transfer(1), secret=stranger)) == {
        "InvalidAccessKeyError": {
            "AccessKeyNotFound": {"account_id": "alice.localnet", "public_key": encode.public_key_of(stranger)}
        }
    }


def test_a_used_nonce() -> None:
    assert refusal(signed(model.Transfer(1), nonce=10)) == {"InvalidNonce": {"tx_nonce": 10, "ak_nonce": 10}}


def test_a_nonce_past_the_heights_bound() -> None:
    bound = HEIGHT * 1_000_000
    assert refusal(signed(model.Transfer(1), nonce=bound)) == {
        "NonceTooLarge": {"tx_nonce": bound, "upper_bound": bound}
    }
    # nearcore's RPC admission passes no height: no bound then
    tx = signed(model.Transfer(1), nonce=bound)
    charged = verifier.check_transaction(
        state(), CONFIG, tx, gas_price=GAS_PRICE, protocol_version=VERSION, block_height=None
    )
    assert charged.access_key.nonce == bound


def test_not_enough_balance() -> None:
    tx = signed(model.Transfer(NEAR))
    cost = fees.tx_cost(CONFIG, tx.transaction, GAS_PRICE).total_cost
    assert refusal(tx, state(amount=NEAR)) == {
        "NotEnoughBalance": {"signer_id": "alice.localnet", "balance": str(NEAR), "cost": str(cost)}
    }


def test_not_enough_allowance() -> None:
    world = state()
    world.keys["alice.localnet", CALLER_KEY] = model.AccessKey(10, replace(CALL_PERMISSION, allowance=1000))
    tx = signed(call(gas=10**13), secret=CALLER, receiver_id="token.localnet")
    cost = fees.tx_cost(CONFIG, tx.transaction, GAS_PRICE).total_cost
    assert refusal(tx, world) == {
        "InvalidAccessKeyError": {
            "NotEnoughAllowance": {
                "account_id": "alice.localnet",
                "public_key": CALLER_KEY,
                "allowance": "1000",
                "cost": str(cost),
            }
        }
    }


def test_lack_balance_for_state_after_the_charge() -> None:
    per_byte = int(runtime_config()["storage_amount_per_byte"])
    storage = 1000  # past the zero-balance limit of 770 bytes
    tx = signed(model.Transfer(NEAR))
    cost = fees.tx_cost(CONFIG, tx.transaction, GAS_PRICE).total_cost
    amount = cost + storage * per_byte - 5
    assert refusal(tx, state(amount=amount, storage_usage=storage)) == {
        "LackBalanceForState": {"signer_id": "alice.localnet", "amount": "5"}
    }
    # a zero-balance account (770 bytes or less) needs nothing for its storage
    charged = verifier.check_transaction(
        state(amount=cost, storage_usage=770),
        CONFIG,
        tx,
        gas_price=GAS_PRICE,
        protocol_version=VERSION,
        block_height=HEIGHT,
    )
    assert charged.signer.amount == 0


def caller_refusal(tx: model.SignedTransaction) -> Any:
    error = refusal(tx)
    assert list(error) == ["InvalidAccessKeyError"]
    return error["InvalidAccessKeyError"]


def test_a_function_call_key_allows_one_function_call_only() -> None:
    two = signed(call(), call(), secret=CALLER, receiver_id="token.localnet")
    assert caller_refusal(two) == "RequiresFullAccess"
    transfer = signed(model.Transfer(1), secret=CALLER, receiver_id="token.localnet")
    assert caller_refusal(transfer) == "RequiresFullAccess"


def test_a_function_call_key_attaches_no_deposit() -> None:
    tx = signed(call(deposit=1), secret=CALLER, receiver_id="token.localnet")
    assert caller_refusal(tx) == "DepositWithFunctionCall"


def test_a_function_call_key_calls_its_receiver_only() -> None:
    tx = signed(call(), secret=CALLER, receiver_id="bob.localnet")
    assert caller_refusal(tx) == {"ReceiverMismatch": {"tx_receiver": "bob.localnet", "ak_receiver": "token.localnet"}}


def test_a_function_call_key_calls_its_methods_only() -> None:
    tx = signed(call("storage_deposit"), secret=CALLER, receiver_id="token.localnet")
    assert caller_refusal(tx) == {"MethodNameMismatch": {"method_name": "storage_deposit"}}


# accepted


def test_a_transfer_is_charged_its_whole_cost() -> None:
    tx = signed(model.Transfer(NEAR))
    charged = verifier.check_transaction(
        state(), CONFIG, tx, gas_price=GAS_PRICE, protocol_version=VERSION, block_height=HEIGHT
    )
    assert charged.cost == fees.tx_cost(CONFIG, tx.transaction, GAS_PRICE)
    assert charged.signer.amount == 100 * NEAR - charged.cost.total_cost
    assert charged.access_key == model.AccessKey(nonce=11, permission=None)


def test_a_function_call_key_pays_from_its_allowance() -> None:
    tx = signed(call(), secret=CALLER, receiver_id="token.localnet")
    charged = verifier.check_transaction(
        state(), CONFIG, tx, gas_price=GAS_PRICE, protocol_version=VERSION, block_height=HEIGHT
    )
    assert charged.access_key == model.AccessKey(11, replace(CALL_PERMISSION, allowance=NEAR - charged.cost.total_cost))
    # any method when the key names none
    world = state()
    world.keys["alice.localnet", CALLER_KEY] = model.AccessKey(10, replace(CALL_PERMISSION, method_names=()))
    verifier.check_transaction(world, CONFIG, tx, gas_price=GAS_PRICE, protocol_version=VERSION, block_height=HEIGHT)
