// An explorer's and a wallet's reads through near-api-js's own provider, as an application makes
// them: viewTransactionStatus (7.x's spelling of txStatus: `tx`), viewTransactionStatusWithReceipts
// (EXPERIMENTAL_tx_status), viewTransactionReceipt (EXPERIMENTAL_receipt), viewChunk (`chunk`,
// the legacy [hash] form), viewValidators (`validators`: [null], {block_id}, {epoch_id}) and
// blockChanges / accountChanges (the changes methods). test_near_api_js_chain_reads.py runs it as
//
//   node chain_reads.mjs URL PLAN_FILE
//
// where the plan (a file: a few hundred calls outgrow a command line) is a JSON list of
// {name, call, arg} (arg left out: the call is made without one); it
// prints one JSON object: per name, what the call returned, or for an error its class, message and
// fields.
import { readFileSync } from 'node:fs';
import { failure, oneAttemptProvider } from './provider.mjs';

const [url, plan] = process.argv.slice(2);
const provider = oneAttemptProvider(url);

const calls = {
  txStatus: (arg) => provider.viewTransactionStatus(arg),
  txStatusWithReceipts: (arg) => provider.viewTransactionStatusWithReceipts(arg),
  receipt: (receiptId) => provider.viewTransactionReceipt(receiptId),
  chunk: (chunkId) => provider.viewChunk(chunkId),
  validators: (arg) => provider.viewValidators(arg),
  blockChanges: (blockQuery) => provider.blockChanges(blockQuery),
  accountChanges: ({ accountIds, blockQuery }) => provider.accountChanges(accountIds, blockQuery),
};

const answers = {};
for (const { name, call, arg } of JSON.parse(readFileSync(plan, 'utf8'))) {
  answers[name] = await failure(() => calls[call](arg));
}
console.log(JSON.stringify(answers));
