// Calls a running nearrpc through the client @open-rpc/generator made from spec/openrpc.json
// (./client.ts beside this file once generated) and prints one JSON line per call:
// {"call": ..., "result": ...} or {"call": ..., "error": {code, message, data}}.
import Client from "./client";

const [host, port, account, height] = process.argv.slice(2);
const client = new Client({ transport: { type: "http", host, port: Number(port) } });

// The generated client checks params with ajv 6, which refuses a `format` it does not know
// (nearcore's uint64, uint32, ...: annotations in JSON Schema). Register each one the document
// uses as an annotation, as a user of this generator has to.
const ajv = (client as unknown as { validator: { ajvValidator: any } }).validator.ajvValidator;
const formats = new Set<string>();
(function collect(node: unknown): void {
  if (Array.isArray(node)) node.forEach(collect);
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "format" && typeof value === "string") formats.add(value);
      else collect(value);
    }
  }
})(Client.openrpcDocument);
for (const format of formats) {
  if (!ajv._formats[format]) {
    for (const type of ["number", "string"]) ajv.addFormat(format, { type, validate: () => true });
  }
}

// Its by-name methods check params by name in the array of arguments, so one with a required
// param (account_id) never passes (@open-rpc/schema-utils-js MethodCallValidator); those go
// through the generated client's own JSON-RPC client, by name, as the document says.
const byName = (method: string, params: object) => () => client.rpc.request({ method, params });

const calls: Array<[string, () => Promise<unknown>]> = [
  ["genesis_config", () => client.genesis_config()],
  ["client_config", () => client.client_config()],
  ["EXPERIMENTAL_protocol_config", () => client.EXPERIMENTAL_protocol_config(undefined, "final")],
  ["block", () => client.block(Number(height))],
  ["status", () => client.status()],
  ["gas_price", () => client.gas_price(null)],
  ["EXPERIMENTAL_view_account", byName("EXPERIMENTAL_view_account", { account_id: account, finality: "final" })],
  ["EXPERIMENTAL_view_code", byName("EXPERIMENTAL_view_code", { account_id: account, block_id: Number(height) })],
  ["EXPERIMENTAL_view_access_key_list", byName("EXPERIMENTAL_view_access_key_list", { account_id: account, finality: "final" })],
  ["query", byName("query", { request_type: "view_account", account_id: account, finality: "final" })],
  ["rpc.discover", byName("rpc.discover", {})],
  ["block.unknown", () => client.block(Number(height) + 1000000)],
];

async function main(): Promise<void> {
  for (const [call, send] of calls) {
    try {
      console.log(JSON.stringify({ call, result: await send() }));
    } catch (error) {
      const e = error as { code?: number; message?: string; data?: unknown };
      console.log(JSON.stringify({ call, error: { code: e.code, message: e.message, data: e.data } }));
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
