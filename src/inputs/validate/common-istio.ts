/** Pieces shared by the Istio validators: workload selectors, destinations, port selectors, percentages, weights. */
import type { Destination, Percent, PortSelector } from '../../model/istio.js';
import { compact, fields, get, int, num, port, requiredStr, str, strMap, type Reader } from './reader.js';

/** A `{matchLabels}` workload selector as read; `matchLabels` absent when the object sets none. */
export interface WorkloadSelectorRead {
  readonly matchLabels?: Record<string, string>;
}

/**
 * A workload selector (`selector` of AuthorizationPolicy, PeerAuthentication, RequestAuthentication,
 * Telemetry; a DestinationRule's `workloadSelector`), checked as istiod's validateWorkloadSelector:
 * an empty key or a `*` in a key or value is an error, a selector without labels a warning.
 * Undefined when the field is absent.
 */
export function workloadSelector(r: Reader, v: unknown, path: string): WorkloadSelectorRead | undefined {
  const o = fields(r, v, path, ['matchLabels']);
  if (!o) return undefined;
  const matchLabels = strMap(r, get(o, 'matchLabels'), `${path}.matchLabels`);
  checkSelectorLabels(r, matchLabels, `${path}.matchLabels`);
  if (!matchLabels || Object.keys(matchLabels).length === 0)
    r.warn(path, 'workload selector specified without labels', 'empty-selector');
  return compact({ matchLabels });
}

/**
 * The labels of a workload selector (`matchLabels`, or an EnvoyFilter's `workloadSelector.labels`),
 * as istiod's validateWorkloadSelector and ValidateAlphaWorkloadSelector check them: an empty key or
 * a `*` in a key or value is an error at `path`.
 */
export function checkSelectorLabels(
  r: Reader,
  labels: Readonly<Record<string, string>> | undefined,
  path: string,
): void {
  for (const [key, value] of Object.entries(labels ?? {})) {
    const pair = `${key.slice(0, 60)}=${value.slice(0, 60)}`;
    if (key === '') r.error(path, `empty key is not supported in selector: "${pair}"`);
    if (key.includes('*') || value.includes('*')) r.error(path, `wildcard is not supported in selector: "${pair}"`);
  }
}

export function portSelector(r: Reader, v: unknown, path: string): PortSelector | undefined {
  const o = fields(r, v, path, ['number']);
  if (!o) return undefined;
  return compact({ number: port(r, get(o, 'number'), `${path}.number`) });
}

export function destination(r: Reader, v: unknown, path: string): Destination | undefined {
  const o = fields(r, v, path, ['host', 'subset', 'port']);
  if (!o) {
    if (v === undefined || v === null) r.error(path, 'is required', 'missing-field');
    return undefined;
  }
  const host = requiredStr(r, get(o, 'host'), `${path}.host`);
  const subset = str(r, get(o, 'subset'), `${path}.subset`);
  const portSel = portSelector(r, get(o, 'port'), `${path}.port`);
  if (host === undefined) return undefined;
  return compact({
    host,
    subset: subset === '' ? undefined : subset,
    port: portSel?.number !== undefined ? portSel : undefined,
  });
}

export function percent(r: Reader, v: unknown, path: string): Percent | undefined {
  const o = fields(r, v, path, ['value']);
  if (!o) return undefined;
  const value = num(r, get(o, 'value'), `${path}.value`, 0, 100);
  return value === undefined ? undefined : { value };
}

/** The deprecated integer percentage form (`percent: 50`). */
export function intPercent(r: Reader, v: unknown, path: string): Percent | undefined {
  const value = int(r, v, path, 0, 100);
  return value === undefined ? undefined : { value };
}

export function weight(r: Reader, v: unknown, path: string): number | undefined {
  return int(r, v, path, 0, 100);
}

/** Istio's rule: with several destinations the weights must add up to 100; one may omit it. */
export function checkWeights(r: Reader, weights: readonly (number | undefined)[], path: string): void {
  if (weights.length <= 1) return;
  const sum = weights.reduce<number>((a, w) => a + (w ?? 0), 0);
  if (sum !== 100) r.error(path, `weights of ${weights.length} destinations add up to ${sum}, must be 100`);
}
