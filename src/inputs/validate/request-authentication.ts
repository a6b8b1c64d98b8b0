/**
 * RequestAuthentication (security.istio.io v1/v1beta1) → model/request-authentication.ts, with the
 * webhook's checks (istio pkg/config/validation: ValidateRequestAuthentication): an issuer per
 * rule, jwksUri an http(s) URL, header locations named, claim-to-header names valid, selector or
 * targetRef(s) but not both. One invalid part invalidates the policy.
 */
import { workloadSelector } from './common-istio.js';
import type { Origin } from '../../model/diagnostics.js';
import type { JwtRule, RequestAuthentication } from '../../model/request-authentication.js';
import { readTargetRef } from './authorization-policy.js';
import { duration } from './duration.js';
import { readMeta } from './meta.js';
import { bool, compact, fields, get, list, requiredStr, str, strList, type Raw, type Reader } from './reader.js';

const RULE_FIELDS = [
  'issuer',
  'audiences',
  'jwksUri',
  // jwksUri under its proto name: protojson reads both names into one field.
  'jwks_uri',
  'jwks',
  'fromHeaders',
  'fromParams',
  'fromCookies',
  'outputPayloadToHeader',
  'forwardOriginalToken',
  'outputClaimToHeaders',
  'timeout',
  'spaceDelimitedClaims',
  'presence',
];
const HEADER_NAME = /^[-!#$%&'*+.^_`|~0-9a-zA-Z]+$/;

/** istiod's ParseJwksURI: http or https, with a host. */
export function parseJwksUri(uri: string): { host: string; port: number; https: boolean } | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') return undefined;
  const https = u.protocol === 'https:';
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return { host, port: u.port === '' ? (https ? 443 : 80) : Number(u.port), https };
}

function jwtRule(r: Reader, v: unknown, path: string): JwtRule | undefined {
  const o = fields(r, v, path, RULE_FIELDS);
  if (!o) return undefined;
  const at = (k: string) => `${path}.${k}`;
  const issuer = requiredStr(r, get(o, 'issuer'), at('issuer'));
  const nonEmpty = (k: string) => {
    const values = strList(r, get(o, k), at(k));
    values?.forEach((s, i) => s === '' && r.error(`${at(k)}[${i}]`, 'must not be empty'));
    return values;
  };
  // `jwks_uri` is jwksUri's proto name; protojson refuses the field set twice.
  const uriKey = get(o, 'jwksUri') !== undefined ? 'jwksUri' : 'jwks_uri';
  if (uriKey === 'jwksUri' && get(o, 'jwks_uri') !== undefined)
    r.error(at('jwks_uri'), 'duplicate field: jwks_uri is jwksUri under its proto name');
  const jwksUri = str(r, get(o, uriKey), at(uriKey));
  if (jwksUri !== undefined && jwksUri !== '' && !parseJwksUri(jwksUri))
    r.error(at(uriKey), `"${jwksUri.slice(0, 80)}" is not an http or https URL`);
  const presence = str(r, get(o, 'presence'), at('presence'));
  if (presence !== undefined && presence !== 'OPTIONAL' && presence !== 'REQUIRED')
    r.error(at('presence'), `must be OPTIONAL or REQUIRED, got "${presence.slice(0, 40)}"`);
  // In the API, read by no istiod code: a request without a token still passes the JWT filter.
  else if (presence === 'REQUIRED')
    r.warn(
      at('presence'),
      'presence REQUIRED is not applied: istiod does not apply it either (a request without a token is still allowed; require one with an AuthorizationPolicy)',
      'unsupported-field',
    );
  const fromHeaders = list(r, get(o, 'fromHeaders'), at('fromHeaders'), (item, p) => {
    const h = fields(r, item, p, ['name', 'prefix']);
    const name = h ? requiredStr(r, get(h, 'name'), `${p}.name`) : undefined;
    const prefix = h ? str(r, get(h, 'prefix'), `${p}.prefix`) : undefined;
    return name === undefined ? undefined : compact({ name, prefix });
  });
  const outputClaimToHeaders = list(r, get(o, 'outputClaimToHeaders'), at('outputClaimToHeaders'), (item, p) => {
    const h = fields(r, item, p, ['header', 'claim']);
    const header = h ? requiredStr(r, get(h, 'header'), `${p}.header`) : undefined;
    const claim = h ? requiredStr(r, get(h, 'claim'), `${p}.claim`) : undefined;
    if (header !== undefined && !HEADER_NAME.test(header))
      r.error(`${p}.header`, `"${header.slice(0, 60)}" is not a valid header name`);
    return header === undefined || claim === undefined ? undefined : { header, claim };
  });
  const outputPayloadToHeader = str(r, get(o, 'outputPayloadToHeader'), at('outputPayloadToHeader'));
  if (outputPayloadToHeader !== undefined && outputPayloadToHeader !== '' && !HEADER_NAME.test(outputPayloadToHeader))
    r.error(at('outputPayloadToHeader'), `"${outputPayloadToHeader.slice(0, 60)}" is not a valid header name`);
  const rule = compact({
    issuer: issuer ?? '',
    audiences: nonEmpty('audiences'),
    jwksUri: jwksUri === '' ? undefined : jwksUri,
    jwks: ((s) => (s === '' ? undefined : s))(str(r, get(o, 'jwks'), at('jwks'))),
    fromHeaders,
    fromParams: nonEmpty('fromParams'),
    fromCookies: nonEmpty('fromCookies'),
    outputPayloadToHeader: outputPayloadToHeader === '' ? undefined : outputPayloadToHeader,
    forwardOriginalToken: bool(r, get(o, 'forwardOriginalToken'), at('forwardOriginalToken')),
    outputClaimToHeaders,
    timeoutMs: duration(r, get(o, 'timeout'), at('timeout')),
    spaceDelimitedClaims: nonEmpty('spaceDelimitedClaims'),
  });
  return issuer === undefined ? undefined : rule;
}

export function readRequestAuthentication(
  r: Reader,
  raw: Raw,
  origin: Origin,
  apiVersion: string,
): RequestAuthentication | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const spec = fields(r, get(raw, 'spec'), 'spec', ['selector', 'targetRef', 'targetRefs', 'jwtRules']) ?? {};
  const selectorRaw = workloadSelector(r, get(spec, 'selector'), 'spec.selector');
  const ref = readTargetRef(r, get(spec, 'targetRef'), 'spec.targetRef');
  const refs = list(r, get(spec, 'targetRefs'), 'spec.targetRefs', (item, p) => readTargetRef(r, item, p));
  if (selectorRaw && (ref || refs?.length))
    r.error('spec', 'only one of selector, targetRef or targetRefs may be set', 'conflicting-fields');
  if (ref && refs?.length) r.error('spec', 'only one of targetRef or targetRefs may be set', 'conflicting-fields');
  const jwtRules = list(r, get(spec, 'jwtRules'), 'spec.jwtRules', (item, p) => jwtRule(r, item, p));
  if (!meta || r.failed) return undefined;
  return {
    kind: 'RequestAuthentication',
    apiVersion,
    meta,
    origin,
    spec: compact({
      selector: selectorRaw,
      targetRef: ref,
      targetRefs: refs,
      jwtRules,
    }),
  };
}
