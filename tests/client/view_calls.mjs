// Contract view calls through near-api-js's own provider, as an application makes them:
// callFunction (7.x's spelling of viewFunction: JSON arguments in, the parsed JSON out) and
// callFunctionRaw (the whole CallResult). test_near_api_js_view_calls.py runs it as
//
//   node view_calls.mjs URL PLAN_JSON
//
// where the plan is a list of {name, contractId, method, args, blockId, raw}; it prints one JSON
// object: per name, what the call returned, or for an error its class, message and fields.
import { failure, oneAttemptProvider } from './provider.mjs';

const [url, plan] = process.argv.slice(2);
const provider = oneAttemptProvider(url);

const answers = {};
for (const { name, contractId, method, args, blockId, raw } of JSON.parse(plan)) {
  const params = { contractId, method, args, blockQuery: { blockId } };
  answers[name] = await failure(() => (raw ? provider.callFunctionRaw(params) : provider.callFunction(params)));
}
console.log(JSON.stringify(answers));
