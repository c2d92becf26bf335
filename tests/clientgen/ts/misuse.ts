// Mistakes the generated types must catch. tsc fails when a line marked as expecting an error
// compiles, so types that are too loose (`any`, a lost required member) fail the check.
import type { components } from "./schema";
import { call } from "./client";

type Schemas = components["schemas"];

export async function misuse(url: string, block: Schemas["RpcBlockResponse"], cause: Schemas["RpcViewAccountError"]): Promise<void> {
  // @ts-expect-error a height is a number
  const height: string = block.header.height;
  // @ts-expect-error no such member on a block header
  void block.header.no_such_member;
  // @ts-expect-error view_account needs an account id
  await call(url, "EXPERIMENTAL_view_account", { jsonrpc: "2.0", id: 1, method: "EXPERIMENTAL_view_account", params: { finality: "final" } });
  // @ts-expect-error a request for one method cannot go to another
  await call(url, "block", { jsonrpc: "2.0", id: 1, method: "genesis_config" });
  // @ts-expect-error finality is one of three words
  await call(url, "block", { jsonrpc: "2.0", id: 1, method: "block", params: { finality: "latest" } });
  // @ts-expect-error only "2.0"
  await call(url, "genesis_config", { jsonrpc: "1.0", id: 1, method: "genesis_config" });
  if (cause.name === "UNKNOWN_BLOCK") {
    // @ts-expect-error an UNKNOWN_BLOCK info names the block, not an account
    void cause.info.requested_account_id;
  }
  // @ts-expect-error the legacy error codes are three numbers
  const code: Schemas["RpcErrorCode"] = -1;
  void height; void code;
}
