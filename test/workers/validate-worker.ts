/** A Worker that runs the validator cases (validate-cases.ts) and answers with their results as JSON. */
import { runValidateCases } from './validate-cases.js';

export default {
  fetch(): Response {
    return new Response(JSON.stringify(runValidateCases()), { headers: { 'content-type': 'application/json' } });
  },
};
