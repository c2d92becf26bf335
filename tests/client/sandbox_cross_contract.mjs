// Cross-contract flows an application runs through near-api-js against `nearrpc serve --sandbox`
// (or a sandboxed fork): near-sdk-rs's fungible token and its DeFi receiver, its NFT and token
// receiver, each on a sub-account of the funded account (given the funded account's own key, so
// every run signs the same transactions), then an ft_transfer_call whose callback refunds part of
// the amount, an nft_mint, and an nft_transfer_call the receiver keeps. Run as
//
//   node sandbox_cross_contract.mjs URL ACCOUNT_ID SECRET_KEY FT_WASM DEFI_WASM NFT_WASM RECEIVER_WASM
//
// It prints one JSON object: each step's final outcome as the library returned it, and the
// token balances and owner read back through view calls.
import { readFileSync } from 'node:fs';
import { Account, KeyPair } from 'near-api-js';
import { failure, oneAttemptProvider } from './provider.mjs';

const [url, accountId, secretKey, ftWasm, defiWasm, nftWasm, receiverWasm] = process.argv.slice(2);
const provider = oneAttemptProvider(url);
const funded = new Account(accountId, provider, secretKey);
const publicKey = KeyPair.fromString(secretKey).getPublicKey().toString();
const NEAR = 10n ** 24n;
const TGAS = 10n ** 12n;
const answers = {};

async function contract(name, wasm, init, args) {
  const id = `${name}.${accountId}`;
  answers[`${name}_create`] = await failure(() => funded.createAccount({ newAccountId: id, publicKey, nearToTransfer: 20n * NEAR }));
  const account = new Account(id, provider, secretKey);
  answers[`${name}_deploy`] = await failure(() => account.deployContract(new Uint8Array(readFileSync(wasm))));
  answers[`${name}_init`] = await failure(() => account.callFunctionRaw({ contractId: id, methodName: init, args, gas: 100n * TGAS }));
  return id;
}

const view = (contractId, method, args) => failure(() => provider.callFunction({ contractId, method, args, blockQuery: { finality: 'final' } }));
const call = (contractId, methodName, args, deposit, gas = 150n * TGAS) => failure(() => funded.callFunctionRaw({ contractId, methodName, args, deposit, gas }));

const token = await contract('token', ftWasm, 'new_default_meta', { owner_id: accountId, total_supply: '1000' });
const defi = await contract('defi', defiWasm, 'new', { fungible_token_account_id: token });
const bounds = await view(token, 'storage_balance_bounds', {});
answers.ft_register = await call(token, 'storage_deposit', { account_id: defi }, BigInt(bounds.returned.min));
answers.ft_transfer_call = await call(token, 'ft_transfer_call', { receiver_id: defi, amount: '100', msg: '10' }, 1n);
answers.ft_balances = [await view(token, 'ft_balance_of', { account_id: accountId }), await view(token, 'ft_balance_of', { account_id: defi })];
answers.ft_total_supply = await view(token, 'ft_total_supply', {});

const nft = await contract('nft', nftWasm, 'new_default_meta', { owner_id: accountId });
const receiver = await contract('receiver', receiverWasm, 'new', { non_fungible_token_account_id: nft });
answers.nft_mint = await call(nft, 'nft_mint', { token_id: '0', token_owner_id: accountId, token_metadata: { title: 'Olympus Mons' } }, NEAR / 10n);
answers.nft_transfer_call = await call(nft, 'nft_transfer_call', { receiver_id: receiver, token_id: '0', msg: 'keep-it-later' }, 1n);
answers.nft_token = await view(nft, 'nft_token', { token_id: '0' });

console.log(JSON.stringify(answers, (_, value) => (typeof value === 'bigint' ? `${value}n` : value)));
