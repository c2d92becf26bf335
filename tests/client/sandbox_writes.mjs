// What an application writes through near-api-js to `nearrpc serve --sandbox`, in its order:
// a transfer, calls on the sample's counter, a sub-account created, given a contract, a key added
// and deleted, a signed delegate relayed by the funded account, the sub-account deleted; then
// three refusals, which the library turns into its typed errors. test_near_api_js_sandbox.py
// runs it as
//
//   node sandbox_writes.mjs URL ACCOUNT_ID SECRET_KEY RECEIVER_ID WASM_PATH [FT_WASM_PATH]
//
// (with near-sdk's fungible token's wasm, also: the token deployed on a new sub-account,
// initialized, the receiver's storage_deposit at the contract's bound and an ft_transfer)
// and reads the one JSON object it prints: for each step the library's answer and the
// balances (at finality final) of the accounts it touched before and after it.
import { readFileSync } from 'node:fs';
import { Account, KeyPair, KeyPairSigner, actions, baseDecode, createTransaction } from 'near-api-js';
import { failure, oneAttemptProvider } from './provider.mjs';

const [url, accountId, secretKey, receiverId, wasmPath, ftWasmPath] = process.argv.slice(2);
const provider = oneAttemptProvider(url);
const account = new Account(accountId, provider, secretKey);
const NEAR = 10n ** 24n;
const COUNTER = 'counter.localnet';

async function balances(ids) {
  const found = {};
  for (const id of ids) {
    found[id] = (await failure(async () => (await provider.viewAccount({ accountId: id, finalityQuery: { finality: 'final' } })).amount.toString())).returned ?? null;
  }
  return found;
}

// each step: the balances of `ids` before and after, and what the library answered
async function step(ids, call) {
  const before = await balances(ids);
  const answer = await failure(call);
  return { before, answer, after: await balances(ids) };
}

async function count(contractId) {
  return failure(() => provider.callFunction({ contractId, method: 'get_num', args: {}, blockQuery: { finality: 'final' } }));
}

const answers = {};
answers.transfer = await step([accountId, receiverId], () => account.transfer({ receiverId, amount: NEAR }));

answers.count_before = await count(COUNTER);
answers.increment = await step([accountId], () => account.callFunction({ contractId: COUNTER, methodName: 'increment', args: {} }));
answers.count_after = await count(COUNTER);
answers.decrement = await step([accountId], () => account.callFunctionRaw({ contractId: COUNTER, methodName: 'decrement', args: {} }));

const subId = `sub.${accountId}`;
const subKey = KeyPair.fromRandom('ed25519');
answers.create_account = await step([accountId, subId], () => account.createAccount({
  newAccountId: subId, publicKey: subKey.getPublicKey().toString(), nearToTransfer: 10n * NEAR,
}));
const sub = new Account(subId, provider, subKey.toString());
answers.deploy = await step([subId], () => sub.deployContract(new Uint8Array(readFileSync(wasmPath))));
answers.deployed_code = await failure(() => sub.getContractCode());
answers.sub_increment = await step([subId], () => sub.callFunctionRaw({ contractId: subId, methodName: 'increment', args: {} }));
answers.sub_count = await count(subId);

const extraKey = KeyPair.fromRandom('ed25519').getPublicKey().toString();
answers.extra_key = extraKey;
answers.add_key = await step([subId], () => sub.addFullAccessKey(extraKey));
answers.keys_after_add = (await sub.getAccessKeyList()).keys.map((key) => key.public_key);
answers.delete_key = await step([subId], () => sub.deleteKey(extraKey));
answers.keys_after_delete = (await sub.getAccessKeyList()).keys.map((key) => key.public_key);

// NEP-366: the sub-account signs a delegate of an increment, the funded account relays it (and pays)
answers.delegate_count_before = await count(COUNTER);
const signedDelegate = await sub.createSignedMetaTransaction({
  receiverId: COUNTER, actions: [actions.functionCall('increment', {}, 30_000_000_000_000n, 0n)],
});
answers.relay = await step([accountId, subId], () => account.relayMetaTransaction(signedDelegate.signedDelegate));
answers.delegate_count_after = await count(COUNTER);

answers.delete_account = await step([accountId, subId], () => sub.deleteAccount(accountId));

if (ftWasmPath) {
  const tokenId = `token.${accountId}`;
  const tokenKey = KeyPair.fromRandom('ed25519');
  answers.ft_create = await failure(() => account.createAccount({
    newAccountId: tokenId, publicKey: tokenKey.getPublicKey().toString(), nearToTransfer: 10n * NEAR,
  }));
  const token = new Account(tokenId, provider, tokenKey.toString());
  answers.ft_deploy = await failure(() => token.deployContract(new Uint8Array(readFileSync(ftWasmPath))));
  answers.ft_new = await failure(() => token.callFunctionRaw({
    contractId: tokenId, methodName: 'new_default_meta', args: { owner_id: accountId, total_supply: '1000000' },
    gas: 100_000_000_000_000n,
  }));
  const bounds = await provider.callFunction({ contractId: tokenId, method: 'storage_balance_bounds', args: {} });
  answers.ft_bound = bounds.min;
  answers.ft_storage_deposit = await step([accountId, tokenId], () => account.callFunctionRaw({
    contractId: tokenId, methodName: 'storage_deposit', args: { account_id: receiverId }, deposit: BigInt(bounds.min),
  }));
  answers.ft_transfer = await step([accountId, tokenId], () => account.callFunctionRaw({
    contractId: tokenId, methodName: 'ft_transfer', args: { receiver_id: receiverId, amount: '250' }, deposit: 1n,
  }));
  answers.ft_balances = [
    await provider.callFunction({ contractId: tokenId, method: 'ft_balance_of', args: { account_id: accountId } }),
    await provider.callFunction({ contractId: tokenId, method: 'ft_balance_of', args: { account_id: receiverId } }),
  ];
}

// refusals: a nonce already used (sent by the provider: an Account retries those itself), more
// than the balance, a call to an account without code
const signer = KeyPairSigner.fromSecretKey(secretKey);
const publicKey = await signer.getPublicKey();
const key = await provider.viewAccessKey({ accountId, publicKey, finalityQuery: { finality: 'final' } });
const block = await provider.viewBlock({ finality: 'final' });
const stale = createTransaction(accountId, publicKey, receiverId, key.nonce, [actions.transfer(1n)],
  baseDecode(block.header.hash));
const { signedTransaction } = await signer.signTransaction(stale);
answers.bad_nonce = await failure(() => provider.sendTransaction(signedTransaction));
answers.bad_nonce_ak_nonce = key.nonce.toString();
const state = await provider.viewAccount({ accountId, finalityQuery: { finality: 'final' } });
answers.no_balance = await failure(() => account.transfer({ receiverId, amount: BigInt(state.amount) * 2n }));
answers.no_code = await step([accountId], () => account.callFunction({ contractId: receiverId, methodName: 'increment', args: {} }));

console.log(JSON.stringify(answers, (_, value) => (typeof value === 'bigint' ? `${value}n` : value)));
