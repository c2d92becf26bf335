// A small client over the types openapi-typescript generates from spec/openapi.json (./schema,
// written by tests/clientgen/test_typescript_client.py). It must pass `tsc --strict --noEmit`.
import type { components, operations } from "./schema";

type Schemas = components["schemas"];
export type Method = "genesis_config" | "EXPERIMENTAL_protocol_config" | "EXPERIMENTAL_view_account" | "client_config" | "block"
  // beyond interface 1.2.14
  | "status" | "gas_price" | "query" | "EXPERIMENTAL_view_access_key_list" | "EXPERIMENTAL_view_code";
type Request<M extends Method> = operations[M]["requestBody"]["content"]["application/json"];
type Response<M extends Method> = operations[M]["responses"][200]["content"]["application/json"];

/** POST one request to the method's own path; the answer is typed by the method. */
export async function call<M extends Method>(url: string, method: M, request: Request<M>): Promise<Response<M>> {
  const answer = await fetch(`${url}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  return (await answer.json()) as Response<M>;
}

type Envelope = { jsonrpc: "2.0"; id: unknown };
type Outcome<R, E> = { ok: true; result: R } | { ok: false; error: E };

/** Split an answer into its result or error; every answer carries the envelope members. */
function outcome<R, E>(answer: Envelope & ({ result: R } | { error: E })): Outcome<R, E> {
  return "result" in answer ? { ok: true, result: answer.result } : { ok: false, error: answer.error };
}

/** One line for any error of view_account: every cause and its typed info. */
export function describeViewAccountError(error: Schemas["ErrorWrapper_for_RpcViewAccountError"]): string {
  switch (error.name) {
    case "REQUEST_VALIDATION_ERROR":
      switch (error.cause.name) {
        case "METHOD_NOT_FOUND": return `no method ${error.cause.info.method_name}`;
        case "PARSE_ERROR": return `bad request: ${error.cause.info.error_message}`;
      }
      break;
    case "HANDLER_ERROR":
      switch (error.cause.name) {
        case "UNKNOWN_BLOCK": return `unknown block ${JSON.stringify(error.cause.info.block_reference)}`;
        case "INVALID_ACCOUNT":
        case "UNKNOWN_ACCOUNT": {
          const info: Schemas["RpcViewAccountError_UNKNOWN_ACCOUNT_info"] = error.cause.info;
          return `${error.cause.name} ${info.requested_account_id} at ${info.block_height} (${info.block_hash})`;
        }
        case "INTERNAL_ERROR": return error.cause.info.error_message;
      }
      break;
    case "INTERNAL_ERROR":
      return `${error.code} ${error.cause.info.error_message}`;
  }
}

export function describeBlockError(cause: Schemas["RpcBlockError"]): string {
  switch (cause.name) {
    case "UNKNOWN_BLOCK": return `unknown block (${Object.keys(cause.info).length} details)`;
    case "NOT_SYNCED_YET": return "not synced yet";
    case "INTERNAL_ERROR": return cause.info.error_message;
  }
}

export async function tour(url: string): Promise<string[]> {
  const lines: string[] = [];

  const genesis = outcome(await call(url, "genesis_config", { jsonrpc: "2.0", id: 1, method: "genesis_config" }));
  if (genesis.ok) {
    const layout: Schemas["ShardLayout"] = genesis.result.shard_layout;
    const shards = "V2" in layout ? layout.V2.shard_ids.length : 0;
    lines.push(`${genesis.result.chain_id}: ${shards} shards from ${genesis.result.genesis_time}`);
  }

  const client = outcome(await call(url, "client_config", { jsonrpc: "2.0", id: 2, method: "client_config", params: [] }));
  if (client.ok) {
    const step: Schemas["DurationAsStdSchemaProvider"] | undefined = client.result.gc?.gc_step_period;
    const storage: Schemas["ExternalStorageLocation"] | undefined = client.result.state_sync?.dump?.location;
    const where = storage === undefined ? "-" : "S3" in storage ? storage.S3.bucket : "GCS" in storage ? storage.GCS.bucket : storage.Filesystem.root_dir;
    lines.push(`gc every ${step?.secs ?? 0}s, dumps to ${where}`);
  }

  const block = outcome(await call(url, "block", { jsonrpc: "2.0", id: 3, method: "block", params: { finality: "final" } }));
  if (block.ok) {
    const height: number = block.result.header.height;
    lines.push(`block ${height} ${block.result.header.hash} with ${block.result.chunks.length} chunks`);
  } else if (block.error.name === "HANDLER_ERROR") {
    lines.push(describeBlockError(block.error.cause));
  }
  const positional = await call(url, "block", { jsonrpc: "2.0", id: 4, method: "block", params: [10] });
  lines.push("result" in positional ? `block 10 by position: ${positional.result.header.hash}` : "no block 10");

  const config = outcome(await call(url, "EXPERIMENTAL_protocol_config", {
    jsonrpc: "2.0", id: 5, method: "EXPERIMENTAL_protocol_config", params: { sync_checkpoint: "genesis" },
  }));
  if (config.ok) lines.push(`protocol ${config.result.protocol_version}`);
  else if (config.error.name === "HANDLER_ERROR" && config.error.cause.name === "UNKNOWN_BLOCK") lines.push("unknown block");

  const account = outcome(await call(url, "EXPERIMENTAL_view_account", {
    jsonrpc: "2.0", id: 6, method: "EXPERIMENTAL_view_account", params: { account_id: "nobody.near", block_id: 10 },
  }));
  lines.push(account.ok ? `balance ${account.result.amount}` : describeViewAccountError(account.error));

  // beyond interface 1.2.14: what a client asks first
  const status = outcome(await call(url, "status", { jsonrpc: "2.0", id: 7, method: "status", params: null }));
  if (status.ok) {
    const validators: string[] = status.result.validators.map((v) => v.account_id);
    lines.push(`${status.result.chain_id} at ${status.result.sync_info.latest_block_height}, validators ${validators.join(",")}`);
  }
  const gas = outcome(await call(url, "gas_price", { jsonrpc: "2.0", id: 8, method: "gas_price", params: [null] }));
  if (gas.ok) lines.push(`gas price ${gas.result.gas_price}`);
  const keys = outcome(await call(url, "EXPERIMENTAL_view_access_key_list", {
    jsonrpc: "2.0", id: 9, method: "EXPERIMENTAL_view_access_key_list", params: { account_id: "node0", finality: "final" },
  }));
  if (keys.ok) {
    const permissions = keys.result.keys.map((k) => (k.access_key.permission === "FullAccess" ? "full" : "call"));
    lines.push(`keys of node0: ${permissions.join(",")} at ${keys.result.block_height}`);
  }
  return lines;
}
