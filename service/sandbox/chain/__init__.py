"""The sandbox's chain writer: blocks produced over the runtime's results, written through the
store's writer; implements methods.sandbox_hooks.SandboxChain."""
