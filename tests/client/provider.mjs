// What the near-api-js scripts here share: the library's own provider, and a call's outcome as
// the scripts print it.
import { JsonRpcProvider } from 'near-api-js';

// one attempt: an answer the library retries (a 500) is a failure to see at once, not a minute later
export function oneAttemptProvider(url) {
  return new JsonRpcProvider({ url }, { retries: 1 });
}

// What `call` returned, or for an error its class, message and fields (an object field, such as
// the PublicKey the library makes of a key, as its string).
export async function failure(call) {
  try {
    return { returned: await call() };
  } catch (error) {
    const fields = Object.entries(error).map(([name, value]) => [name, value instanceof Object ? String(value) : value]);
    return { class: error.constructor.name, message: error.message, ...Object.fromEntries(fields) };
  }
}
