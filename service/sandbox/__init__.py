"""The sandbox: the one place the server writes a chain (`serve --sandbox`).

Two rooms, one above the other (../ARCHITECTURE.md, "Writing: the sandbox"):
- `runtime/`: nearcore's runtime, pure over a state view: a signed transaction validated
  (verifier.rs), converted to a receipt and executed action by action (actions.rs, lib.rs) with
  nearcore's fees (config.rs). It knows nothing of blocks' storage, HTTP or the backend.
- `chain/`: one writer per chain: block production (automine or a block time), the block, chunk,
  transaction and receipt records the read methods serve, snapshot and revert, written through
  the store's writer. The methods reach it through `methods.sandbox_hooks.SandboxChain`.
"""
