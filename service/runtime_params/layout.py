"""How flat parameters map onto nearcore's nested RuntimeConfigView (interface 1.2.11 field set).

`NEARCORE_LAYOUT` is a tree whose key order is exactly nearcore's JSON key order (checked
against every reference snapshot). Each leaf says which parameter feeds it and how the value is
rendered (`Kind`). Leaves that nearcore fills from code instead of a parameter are `Const`.

Code defaults: when a parameter is absent (never added, or removed by an `{old: a}` diff),

* `optional=True` leaves are left out of the view (nearcore's `Option` limits that are skipped
  when `None`, e.g. `max_functions_number_per_contract` before protocol version 49);
* leaves with a `default` render that value (nearcore: `account_id_validity_rules_version`
  falls back to V0, which the testnet base table relies on);
* every other leaf has no code default in nearcore either, and building the view fails with
  `MissingParameterError`.

`NOT_IN_VIEW` lists parameters nearcore keeps in its tables but does not show in the view.
Together with the layouts they form `known.KNOWN_PARAMETERS`; the converter rejects any other
name so that a new upstream parameter is a loud, deliberate decision, never silently dropped.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

from .values import JsonValue, ParamValue


class Kind(enum.Enum):
    COST = "cost"  # int, or {gas, compute} -> the gas part (ext costs)
    UINT = "uint"  # plain non-negative integer
    BALANCE = "balance"  # yoctoNEAR integer -> decimal string
    BOOL = "bool"
    STRING = "string"
    FEE = "fee"  # {send_sir, send_not_sir, execution} -> the gas part of each
    RATIO_PAIR = "ratio_pair"  # {numerator, denominator} -> [n, d] in lowest terms
    RATIO_FLOAT = "ratio_float"  # {numerator, denominator} -> n / d as a float
    VM_KIND = "vm_kind"  # VM name -> after the platform rule (see render.effective_vm_kind)
    STORAGE_GET_MODE = "storage_get_mode"  # flag -> "FlatStorage" / "Trie"


@dataclass(frozen=True)
class Field:
    param: str
    kind: Kind
    optional: bool = False
    default: ParamValue | None = None


@dataclass(frozen=True)
class Const:
    value: JsonValue


@dataclass(frozen=True)
class Obj:
    fields: tuple[tuple[str, Node], ...]

    def keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.fields)


Node: TypeAlias = "Field | Const | Obj"


def _fee(param: str) -> Field:
    return Field(param, Kind.FEE)


def _uint(param: str) -> Field:
    return Field(param, Kind.UINT)


def _flag(param: str) -> Field:
    return Field(param, Kind.BOOL)


def _limit(param: str) -> Field:
    """An `Option` limit: shown only when the parameter is set."""
    return Field(param, Kind.UINT, optional=True)


def _same_name(kind: Kind, *names: str) -> tuple[tuple[str, Node], ...]:
    return tuple((name, Field(name, kind)) for name in names)


# wasm_config.ext_costs: view key `x` comes from parameter `wasm_x`, in this order.
# `contract_compile_*` are not parameters; nearcore reports them as 0.
_EXT_COSTS_BEFORE_COMPILE = (
    "base", "contract_loading_base", "contract_loading_bytes",
    "read_memory_base", "read_memory_byte", "write_memory_base", "write_memory_byte",
    "read_register_base", "read_register_byte", "write_register_base", "write_register_byte",
    "utf8_decoding_base", "utf8_decoding_byte", "utf16_decoding_base", "utf16_decoding_byte",
    "sha256_base", "sha256_byte", "keccak256_base", "keccak256_byte",
    "keccak512_base", "keccak512_byte", "ripemd160_base", "ripemd160_block",
    "ed25519_verify_base", "ed25519_verify_byte", "ecrecover_base",
    "p256_verify_base", "p256_verify_byte", "log_base", "log_byte",
    "storage_write_base", "storage_write_key_byte", "storage_write_value_byte",
    "storage_write_evicted_byte", "storage_read_base", "storage_read_key_byte",
    "storage_read_value_byte", "storage_large_read_overhead_base",
    "storage_large_read_overhead_byte", "storage_remove_base", "storage_remove_key_byte",
    "storage_remove_ret_value_byte", "storage_has_key_base", "storage_has_key_byte",
    "storage_iter_create_prefix_base", "storage_iter_create_prefix_byte",
    "storage_iter_create_range_base", "storage_iter_create_from_byte",
    "storage_iter_create_to_byte", "storage_iter_next_base", "storage_iter_next_key_byte",
    "storage_iter_next_value_byte", "touching_trie_node", "read_cached_trie_node",
    "promise_and_base", "promise_and_per_promise", "promise_return",
    "validator_stake_base", "validator_total_stake_base",
)  # fmt: skip
_EXT_COSTS_AFTER_COMPILE = (
    "alt_bn128_g1_multiexp_base", "alt_bn128_g1_multiexp_element",
    "alt_bn128_g1_sum_base", "alt_bn128_g1_sum_element",
    "alt_bn128_pairing_check_base", "alt_bn128_pairing_check_element",
    "yield_create_base", "yield_create_byte", "yield_create_with_id_base",
    "yield_resume_base", "yield_resume_byte",
    "bls12381_p1_sum_base", "bls12381_p1_sum_element",
    "bls12381_p2_sum_base", "bls12381_p2_sum_element",
    "bls12381_g1_multiexp_base", "bls12381_g1_multiexp_element",
    "bls12381_g2_multiexp_base", "bls12381_g2_multiexp_element",
    "bls12381_map_fp_to_g1_base", "bls12381_map_fp_to_g1_element",
    "bls12381_map_fp2_to_g2_base", "bls12381_map_fp2_to_g2_element",
    "bls12381_pairing_base", "bls12381_pairing_element",
    "bls12381_p1_decompress_base", "bls12381_p1_decompress_element",
    "bls12381_p2_decompress_base", "bls12381_p2_decompress_element",
)  # fmt: skip


def ext_cost(view_key: str) -> Field:
    return Field(f"wasm_{view_key}", Kind.COST)


_EXT_COSTS = Obj(
    (
        *((key, ext_cost(key)) for key in _EXT_COSTS_BEFORE_COMPILE),
        ("contract_compile_base", Const(0)),
        ("contract_compile_bytes", Const(0)),
        *((key, ext_cost(key)) for key in _EXT_COSTS_AFTER_COMPILE),
    )
)

_LIMIT_CONFIG = Obj(
    (
        ("max_gas_burnt", _uint("max_gas_burnt")),
        *_same_name(
            Kind.UINT,
            "max_stack_height", "initial_memory_pages", "max_memory_pages",
            "registers_memory_limit", "max_register_size", "max_number_registers",
            "max_number_logs", "max_total_log_length",
        ),
        ("max_total_prepaid_gas", _uint("max_total_prepaid_gas")),
        *_same_name(
            Kind.UINT,
            "max_actions_per_receipt", "max_deploy_actions_per_receipt",
            "max_number_bytes_method_names", "max_length_method_name", "max_arguments_length",
            "max_length_returned_data", "max_contract_size", "max_transaction_size",
            "max_receipt_size", "max_length_storage_key", "max_length_storage_value",
            "max_promises_per_function_call_action", "max_number_input_data_dependencies",
        ),
        *(
            (name, _limit(name))
            for name in (
                "max_functions_number_per_contract", "max_locals_per_contract",
                "max_params_per_contract", "max_params_per_function",
                "max_operand_stack_bytes_per_function", "max_tables_per_contract",
                "max_elements_per_contract_table", "max_function_body_size",
                "max_instrumented_code_size", "max_blocks_per_function",
                "max_blocks_per_contract", "max_types_per_contract",
            )
        ),
        (
            "account_id_validity_rules_version",
            Field("account_id_validity_rules_version", Kind.UINT, default=0),
        ),
        *_same_name(
            Kind.UINT,
            "yield_timeout_length_in_blocks", "max_yield_payload_size",
            "per_receipt_storage_proof_size_limit",
        ),
    )
)  # fmt: skip

_WASM_CONFIG = Obj(
    (
        ("ext_costs", _EXT_COSTS),
        ("grow_mem_cost", _uint("wasm_grow_mem_cost")),
        ("regular_op_cost", _uint("wasm_regular_op_cost")),
        ("linear_op_base_cost", _uint("wasm_linear_op_base_cost")),
        ("linear_op_unit_cost", _uint("wasm_linear_op_unit_cost")),
        ("vm_kind", Field("vm_kind", Kind.VM_KIND)),
        *_same_name(
            Kind.BOOL,
            "discard_custom_sections", "global_contract_host_fns", "reftypes_bulk_memory",
            "gas_key_host_fns", "one_yocto_on_promise", "p256_verify_host_fn",
            "yield_with_id_host_fns", "chain_id_host_fn", "bls12381_not_in_group_fix",
        ),
        ("storage_get_mode", Field("flat_storage_reads", Kind.STORAGE_GET_MODE)),
        ("fix_contract_loading_cost", _flag("fix_contract_loading_cost")),
        # Always on since implicit accounts became unconditional; not a parameter any more.
        ("implicit_account_creation", Const(True)),
        ("eth_implicit_accounts", _flag("eth_implicit_accounts")),
        ("limit_config", _LIMIT_CONFIG),
    )
)  # fmt: skip

_TRANSACTION_COSTS = Obj(
    (
        ("action_receipt_creation_config", _fee("action_receipt_creation")),
        (
            "data_receipt_creation_config",
            Obj(
                (
                    ("base_cost", _fee("data_receipt_creation_base")),
                    ("cost_per_byte", _fee("data_receipt_creation_per_byte")),
                )
            ),
        ),
        (
            "action_creation_config",
            Obj(
                (
                    ("create_account_cost", _fee("action_create_account")),
                    ("deploy_contract_cost", _fee("action_deploy_contract")),
                    ("deploy_contract_cost_per_byte", _fee("action_deploy_contract_per_byte")),
                    ("function_call_cost", _fee("action_function_call")),
                    ("function_call_cost_per_byte", _fee("action_function_call_per_byte")),
                    ("transfer_cost", _fee("action_transfer")),
                    ("stake_cost", _fee("action_stake")),
                    (
                        "add_key_cost",
                        Obj(
                            (
                                ("full_access_cost", _fee("action_add_full_access_key")),
                                ("function_call_cost", _fee("action_add_function_call_key")),
                                (
                                    "function_call_cost_per_byte",
                                    _fee("action_add_function_call_key_per_byte"),
                                ),
                            )
                        ),
                    ),
                    ("delete_key_cost", _fee("action_delete_key")),
                    ("delete_account_cost", _fee("action_delete_account")),
                    ("delegate_cost", _fee("action_delegate")),
                )
            ),
        ),
        (
            "storage_usage_config",
            Obj(
                (
                    ("num_bytes_account", _uint("storage_num_bytes_account")),
                    ("num_extra_bytes_record", _uint("storage_num_extra_bytes_record")),
                )
            ),
        ),
        ("burnt_gas_reward", Field("burnt_gas_reward", Kind.RATIO_PAIR)),
        (
            "pessimistic_gas_price_inflation_ratio",
            Field("pessimistic_gas_price_inflation", Kind.RATIO_PAIR),
        ),
        ("ml_dsa_65_verification_cost", _uint("ml_dsa_65_verification_cost")),
    )
)

NEARCORE_LAYOUT = Obj(
    (
        ("storage_amount_per_byte", Field("storage_amount_per_byte", Kind.BALANCE)),
        ("transaction_costs", _TRANSACTION_COSTS),
        ("wasm_config", _WASM_CONFIG),
        (
            "account_creation_config",
            Obj(
                (
                    (
                        "min_allowed_top_level_account_length",
                        _uint("min_allowed_top_level_account_length"),
                    ),
                    ("registrar_account_id", Field("registrar_account_id", Kind.STRING)),
                )
            ),
        ),
        (
            "congestion_control_config",
            Obj(
                (
                    *_same_name(
                        Kind.UINT,
                        "max_congestion_incoming_gas", "max_congestion_outgoing_gas",
                        "max_congestion_memory_consumption", "max_congestion_missed_chunks",
                        "max_outgoing_gas", "min_outgoing_gas", "allowed_shard_outgoing_gas",
                        "max_tx_gas", "min_tx_gas",
                    ),
                    (
                        "reject_tx_congestion_threshold",
                        Field("reject_tx_congestion_threshold", Kind.RATIO_FLOAT),
                    ),
                    *_same_name(
                        Kind.UINT,
                        "outgoing_receipts_usual_size_limit", "outgoing_receipts_big_size_limit",
                    ),
                )
            ),
        ),
        (
            "witness_config",
            Obj(
                _same_name(
                    Kind.UINT,
                    "main_storage_proof_size_soft_limit", "combined_transactions_size_limit",
                    "new_transactions_validation_state_size_soft_limit",
                )
            ),
        ),
        ("min_gas_purchase_price", Field("min_gas_purchase_price", Kind.BALANCE)),
        ("account_creation_charge", Field("account_creation_charge", Kind.BALANCE)),
    )
)  # fmt: skip

# Parameters nearcore keeps in its tables but RuntimeConfigView does not show.
NOT_IN_VIEW: frozenset[str] = frozenset(
    {
        # fees of actions the view has no field for
        "action_deterministic_state_init", "action_deterministic_state_init_per_entry",
        "action_deterministic_state_init_per_byte", "action_gas_key_transfer",
        "action_gas_key_byte", "action_gas_key_nonce_write_base",
        "action_deploy_global_contract", "action_deploy_global_contract_per_byte",
        "action_use_global_contract", "action_use_global_contract_per_identifier_byte",
        "deploy_global_contract_execution_base", "deploy_global_contract_execution_per_byte",
        "global_contract_storage_amount_per_byte",
        # gas economics outside the view
        "gas_refund_penalty", "min_gas_refund_penalty",
        # limits / flags outside the view
        "max_gas_burnt_view", "fix_contract_loading_error", "use_state_stored_receipt",
        # protocol 87 (nearcore 2.14): no field in interface 1.2.14's view
        "min_contract_size_per_local", "max_receipt_total_input_size", "max_state_init_entries",
        "universal_accounts", "fix_ml_dsa_cost_charging",
        # bandwidth scheduler
        "max_shard_bandwidth", "max_single_grant", "max_allowance", "max_base_bandwidth",
    }
)  # fmt: skip


def iter_fields(node: Node) -> Iterator[Field]:
    """Every parameter-fed leaf of a layout tree, in key order."""
    if isinstance(node, Field):
        yield node
    elif isinstance(node, Obj):
        for _, child in node.fields:
            yield from iter_fields(child)


def layout_parameters(node: Node) -> frozenset[str]:
    return frozenset(field.param for field in iter_fields(node))
