// Contract view calls through near-api-js's own provider, as an application makes them:
// callFunction (7.x's spelling of viewFunction: JSON arguments in, the parsed JSON out) and
// callFunctionRaw (the whole CallResult). test_near_api_js_view_calls.py runs it as
//
//   node view_calls.mjs URL PLAN_JSON
//
// where the plan is a list of {name, contractId, method, args, blockId, raw}; it prints one JSON
// object: per name, what the call returned, or for an error its class, message and fields.
import { JsonRpcProvider } from 'near-api-js';

const [url, plan] = process.argv.slice(2);
// one attempt: an answer the library retries (a 500) is a failure to see at once, not a minute later
const provider = new JsonRpcProvider({ url }, { retries: 1 });

async function failure(call) {
  try {
    return { returned: await call() };
  } catch (error) {
    const fields = Object.entries(error).map(([name, value]) => [name, value instanceof Object ? String(value) : value]);
    return { class: error.constructor.name, message: error.message, ...Object.fromEntries(fields) };
  }
}

const answers = {};
for (const { name, contractId, method, args, blockId, raw } of JSON.parse(plan)) {
  const params = { contractId, method, args, blockQuery: { blockId } };
  answers[name] = await failure(() => (raw ? provider.callFunctionRaw(params) : provider.callFunction(params)));
}
console.log(JSON.stringify(answers));
