/**
 * VirtualService header operations → Envoy header mutations (istiod's TranslateHeadersOperations):
 * `set` overwrites, `add` appends, keys sorted; pseudo-headers and `host` are never mutated, but a
 * set/add of `:authority` or `host` becomes a host rewrite.
 */
import type { HeaderOperations, Headers } from '../../model/istio.js';
import { envoy } from '../../xds/proto.js';

export type HeaderValueOption = envoy.config.core.v3.HeaderValueOption.$Properties;
const AppendAction = envoy.config.core.v3.HeaderValueOption.HeaderAppendAction;

export interface HeaderMutations {
  requestHeadersToAdd: HeaderValueOption[];
  requestHeadersToRemove: string[];
  responseHeadersToAdd: HeaderValueOption[];
  responseHeadersToRemove: string[];
  /** Host rewrite asked for through `:authority`/`host`; empty when none. */
  authority: string;
}

const isInternal = (key: string): boolean => key.startsWith(':') || key.toLowerCase() === 'host';
const isAuthority = (key: string): boolean => key.toLowerCase() === ':authority' || key.toLowerCase() === 'host';

function options(
  values: Readonly<Record<string, string>> | undefined,
  append: boolean,
): { out: HeaderValueOption[]; authority: string } {
  const out: HeaderValueOption[] = [];
  let authority = '';
  if (!values) return { out, authority };
  for (const key of Object.keys(values).sort()) {
    const value = values[key] as string;
    if (isAuthority(key)) authority = value;
    if (isInternal(key)) continue;
    out.push({
      header: { key, value },
      append_action: append ? AppendAction.APPEND_IF_EXISTS_OR_ADD : AppendAction.OVERWRITE_IF_EXISTS_OR_ADD,
    });
  }
  return { out, authority };
}

function side(ops: HeaderOperations | undefined): { add: HeaderValueOption[]; remove: string[]; authority: string } {
  const set = options(ops?.set, false);
  const add = options(ops?.add, true);
  return {
    add: [...set.out, ...add.out],
    remove: (ops?.remove ?? []).filter((k) => !isInternal(k)),
    authority: set.authority || add.authority,
  };
}

export function translateHeaders(headers: Headers): HeaderMutations {
  const req = side(headers.request);
  const resp = side(headers.response);
  return {
    requestHeadersToAdd: req.add,
    requestHeadersToRemove: req.remove,
    responseHeadersToAdd: resp.add,
    responseHeadersToRemove: resp.remove,
    authority: req.authority,
  };
}

/** Fields to spread into a Route or a ClusterWeight (empty lists left out). */
export function mutationFields(m: HeaderMutations): {
  request_headers_to_add?: HeaderValueOption[];
  request_headers_to_remove?: string[];
  response_headers_to_add?: HeaderValueOption[];
  response_headers_to_remove?: string[];
} {
  const out: ReturnType<typeof mutationFields> = {};
  if (m.requestHeadersToAdd.length) out.request_headers_to_add = m.requestHeadersToAdd;
  if (m.requestHeadersToRemove.length) out.request_headers_to_remove = m.requestHeadersToRemove;
  if (m.responseHeadersToAdd.length) out.response_headers_to_add = m.responseHeadersToAdd;
  if (m.responseHeadersToRemove.length) out.response_headers_to_remove = m.responseHeadersToRemove;
  return out;
}
