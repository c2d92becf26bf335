// The calls an application makes first, through near-api-js's own provider, in its order:
// status, the account, its access keys, the gas price, a block; then two things that do not
// exist, which the library turns into its typed errors. test_near_api_js.py runs it as
//
//   node first_calls.mjs URL ACCOUNT_ID MISSING_ACCOUNT_ID ABSENT_PUBLIC_KEY
//
// and reads the one JSON object it prints: what each call returned, as the library returned it
// (a BigInt written as "<digits>n"), or for an error its class, message and fields (an object
// field, such as the PublicKey the library makes of a key, as its string).
import { failure, oneAttemptProvider } from './provider.mjs';

const [url, accountId, missingAccountId, absentPublicKey] = process.argv.slice(2);
const provider = oneAttemptProvider(url);

const answers = {};
answers.status = await provider.viewNodeStatus();
const head = answers.status.sync_info.latest_block_height;
const final = { finality: 'final' };

answers.account = await provider.viewAccount({ accountId, blockQuery: { blockId: head } });
answers.account_query = await provider.query({ request_type: 'view_account', account_id: accountId, ...final });

answers.access_key_list = await provider.viewAccessKeyList({ accountId, finalityQuery: final });
answers.access_key_list_query = await provider.query({
  request_type: 'view_access_key_list', account_id: accountId, block_id: head,
});
const [firstKey] = answers.access_key_list.keys;
answers.access_key = await provider.viewAccessKey({ accountId, publicKey: firstKey.public_key, finalityQuery: final });

answers.gas_price_head = await provider.viewGasPrice(head);
answers.gas_price_latest = await provider.viewGasPrice();

answers.block = await provider.viewBlock({ blockId: head });
answers.block_by_hash = await provider.viewBlock({ blockId: answers.block.header.prev_hash });

answers.missing_account = await failure(() => provider.viewAccount({ accountId: missingAccountId }));
answers.missing_access_key = await failure(() => provider.viewAccessKey({
  accountId, publicKey: absentPublicKey, finalityQuery: final,
}));

console.log(JSON.stringify(answers, (_, value) => (typeof value === 'bigint' ? `${value}n` : value)));
