/**
 * A request for `explain` as `meshsnap explain` builds one by default: outbound, a plaintext
 * HTTP/1.1 GET of `/` without headers; `call` names the destination and anything else.
 */
import type { ExplainRequest } from '../../src/explain/index.js';

export const explainRequest = (
  call: Partial<ExplainRequest> & Pick<ExplainRequest, 'host' | 'port'>,
): ExplainRequest => ({
  direction: 'outbound',
  protocol: 'http/1.1',
  tls: false,
  method: 'GET',
  path: '/',
  headers: {},
  ...call,
});
