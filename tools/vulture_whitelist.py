"""Names vulture (the dead-code check in ./check) cannot see being used: entry points that
frameworks call by name or by registration. Each line names what calls it."""

# ruff: noqa: F821, B018
app_from_env  # uvicorn --factory, by its import string in nearrpc.cli.serve
_split_origins  # pydantic field_validator
_origins  # pydantic field_validator
_check_upstream  # pydantic field_validator
_block_time_needs_a_sandbox  # pydantic field_validator
_fixed_clock_needs_a_sandbox  # pydantic field_validator
bare_http_error  # FastAPI exception handler, registered by decorator
openapi_document  # FastAPI route, registered by decorator
health  # FastAPI route, registered by decorator
status  # FastAPI route, registered by decorator
exc_type  # __exit__ / __aexit__ signatures
tb  # __exit__ / __aexit__ signatures
identifier  # read by the Jinja2 templates in tools/templates
yaml_implicit_resolvers  # PyYAML loader class attribute
pytestmark  # pytest module marks
pytest_terminal_summary  # pytest hook
pytest_collection_modifyitems  # pytest hook (tests/conftest.py: long tests first)
pytest_itemcollected  # pytest hook (tests/conftest.py: the toolchain tier)
map_case  # schemathesis hook
filter_case  # schemathesis hook (tests/contract/hooks.py)
before_add_examples  # schemathesis hook (tests/contract/hooks.py: the Examples phase)
same_answer_from_the_twin  # schemathesis check (registered by its decorator)
_http_client  # pytest fixture
disable_nagle_algorithm  # http.server handler attribute
log_message  # http.server handler hook
do_POST  # http.server handler hook
close_connection  # http.server handler attribute
daemon_threads  # socketserver attribute
handle_error  # socketserver hook
client_address  # socketserver hook signature
_no_nearrpc_environment  # autouse pytest fixture
EXPERIMENTAL_protocol_config  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_view_account  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_view_code  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_call_function  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_view_state  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_receipt  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_validators_ordered  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_changes_in_block  # handlers are called by method name from the generated dispatch table
block_effects  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_changes  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_tx_status  # handlers are called by method name from the generated dispatch table
tx  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_view_access_key  # handlers are called by method name from the generated dispatch table
EXPERIMENTAL_view_access_key_list  # handlers are called by method name from the generated dispatch table
rpc_discover  # handlers are called by method name from the generated dispatch table (rpc.discover)
send_tx  # handlers are called by method name from the generated dispatch table
broadcast_tx_commit  # handlers are called by method name from the generated dispatch table
broadcast_tx_async  # handlers are called by method name from the generated dispatch table
sandbox_patch_state  # handlers are called by method name from the generated dispatch table
sandbox_fast_forward  # handlers are called by method name from the generated dispatch table
sandbox_snapshot  # handlers are called by method name from the generated dispatch table
sandbox_revert  # handlers are called by method name from the generated dispatch table
signed_transaction  # SandboxChain.submit's parameter (nearrpc.methods.sandbox_hooks, a Protocol)
timeout_s  # SandboxChain.wait's parameter (nearrpc.methods.sandbox_hooks, a Protocol)
pytest_addoption  # pytest hook (nearrpc.testing.plugin)
pytest_runtest_setup  # pytest hook (nearrpc.testing.plugin)
pytest_runtest_makereport  # pytest hook (nearrpc.testing.plugin)
pytest_configure  # pytest hook (nearrpc.testing.plugin: settings refused before any test runs)
nearrpc_server  # pytest fixture offered to client test suites (nearrpc.testing.plugin)
__getattr__  # module attribute hook (PEP 562): nearrpc.testing's lazy names
earliest_hash  # ChainFacts field, read by client test suites (docs/CLIENT_TESTING.md)
missing_account  # ChainFacts field, read by client test suites (docs/CLIENT_TESTING.md)
contract_code_hashes  # ChainFacts field, read by client test suites (docs/CLIENT_TESTING.md)
formatTime  # logging.Formatter hook (nearrpc.cli.logs)
datefmt  # logging.Formatter.formatTime signature
swagger_ui  # FastAPI route, registered by decorator
redoc  # FastAPI route, registered by decorator
prometheus_metrics  # FastAPI route, registered by decorator
collect  # prometheus_client Collector hook (nearrpc.http.metrics)
SingleWriteHttpProtocol  # uvicorn's HTTP protocol class, named by `nearrpc serve` as an import string
GuardedHttpProtocol  # the same, with deadlines and a cap on connections (nearrpc.http.connections)
itersize  # psycopg named-cursor attribute: rows fetched per round trip
frame  # signal handler signature
codes  # StoreVersion counter, read by name through STORE_KINDS
_no_ryuk  # autouse pytest fixture (tests/container)
wasm_threads  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_simd  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_relaxed_simd  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_multi_memory  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_memory64  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_tail_call  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_gc  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_function_references  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_exceptions  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_component_model  # wasmtime.Config property, set for nearrpc.contracts' engine
wasm_bulk_memory  # wasmtime.Config property, set for nearrpc.contracts' engines (off before protocol 84)
wasm_reference_types  # wasmtime.Config property, set for nearrpc.contracts' engines (off before protocol 84)
parallel_compilation  # wasmtime.Config property, set for nearrpc.contracts' engine
consume_fuel  # wasmtime.Config property, set for nearrpc.contracts' engine
max_wasm_stack  # wasmtime.Config property, set for nearrpc.contracts' engine
too_large_contract_state  # catalogue constructor the view_state step raises (issue 34: the store's contract data)
on_response_complete  # uvicorn's HttpToolsProtocol hook (nearrpc.http.connections overrides it)
total_requests  # uvicorn ServerState counter, kept by that override as uvicorn keeps it
storage_keys  # sandbox model.StateView protocol method (the action executor's DeleteAccount reads it)
new_data_receipt_base  # sandbox fees.FeeConfig: read by the action executor (data receipts)
new_data_receipt_byte  # sandbox fees.FeeConfig: read by the action executor (data receipts)
num_bytes_account  # sandbox fees.FeeConfig: read by the action executor (storage usage)
num_extra_bytes_record  # sandbox fees.FeeConfig: read by the action executor (storage usage)
burnt_gas_reward  # sandbox fees.FeeConfig: read by the action executor (contract rewards)
account_creation_charge  # sandbox fees.FeeConfig: read by the action executor (NEP-642 account charge)
deduct  # contracts.gas.GasCounter: an action's burnt and reserved gas, for the promise host functions (issue 46)
