/**
 * Telemetry (telemetry.istio.io v1, v1alpha1) → model/telemetry.ts, with the webhook's checks
 * (istio pkg/config/validation: ValidateTelemetry and the CRD's rules): one of selector, targetRef,
 * targetRefs; provider names not empty; metrics tag overrides (a value with UPSERT, none with
 * REMOVE) and custom metric names; tracing sampling in [0, 100] and custom tags (one kind each,
 * its name or value not empty). One invalid part invalidates the object.
 *
 * meshsnap applies the access logging and the tracing of namespace-wide Telemetries and of those
 * selecting workloads by `selector.matchLabels` or by a `targetRef(s)` to a Gateway API Gateway
 * (its pods); what it does not apply gets a warning naming it: a targetRef to a Service,
 * ServiceEntry or GatewayClass (waypoints only, `unsupported-field`) or to another kind (istiod
 * attaches it to no proxy, `policy-not-applied`), an access log `filter` (CEL), `metrics`, and of
 * tracing what the Envoy API meshsnap encodes cannot say: `disableContextPropagation: true` and
 * `formatter` custom tags (`unsupported-field`). istiod's own warnings are kept: several tracing
 * entries or several providers in one (it uses the first).
 */
import { workloadSelector } from './common-istio.js';
import type { Origin } from '../../model/diagnostics.js';
import { GATEWAY_API_GROUP } from '../../model/gateway-api.js';
import {
  canonicalGroup,
  isGatewayRef,
  type Telemetry,
  type TelemetryAccessLogging,
  type TelemetryCustomTag,
  type TelemetryLogMode,
  type TelemetryTargetRef,
  type TelemetryTracing,
} from '../../model/telemetry.js';
import { readTargetRef } from './authorization-policy.js';
import { MAX_CUSTOM_TAGS, MAX_TAG_TEXT } from './proxy-config.js';
import { duration } from './duration.js';
import { readCreationTimestamp, readMeta } from './meta.js';
import { bool, compact, fields, get, list, mapOf, num, str, type Raw, type Reader } from './reader.js';

const MODES = ['CLIENT_AND_SERVER', 'CLIENT', 'SERVER'];
const METRICS = [
  'ALL_METRICS',
  'REQUEST_COUNT',
  'REQUEST_DURATION',
  'REQUEST_SIZE',
  'RESPONSE_SIZE',
  'TCP_OPENED_CONNECTIONS',
  'TCP_CLOSED_CONNECTIONS',
  'TCP_SENT_BYTES',
  'TCP_RECEIVED_BYTES',
  'GRPC_REQUEST_MESSAGES',
  'GRPC_RESPONSE_MESSAGES',
];

/** An enum value among `values`, or an error. */
function oneOf(r: Reader, v: unknown, path: string, values: readonly string[]): string | undefined {
  const s = str(r, v, path);
  if (s === undefined || values.includes(s)) return s;
  r.error(path, `must be one of ${values.join(', ')}, got "${s.slice(0, 40)}"`);
  return undefined;
}

/** `providers[].name` (validateTelemetryProviders: not empty). */
function providers(r: Reader, v: unknown, path: string): string[] | undefined {
  return list(r, v, path, (item, p) => {
    const o = fields(r, item, p, ['name']);
    const name = o ? str(r, get(o, 'name'), `${p}.name`) : undefined;
    if (o && (name === undefined || name === '')) r.error(`${p}.name`, 'providers.name may not be empty');
    return name || undefined;
  });
}

function accessLogging(r: Reader, v: unknown, path: string): TelemetryAccessLogging | undefined {
  const o = fields(r, v, path, ['providers', 'disabled', 'filter', 'match']);
  if (!o) return undefined;
  const names = providers(r, get(o, 'providers'), `${path}.providers`);
  const disabled = bool(r, get(o, 'disabled'), `${path}.disabled`);
  const match = fields(r, get(o, 'match'), `${path}.match`, ['mode']);
  const mode = match ? oneOf(r, get(match, 'mode'), `${path}.match.mode`, MODES) : undefined;
  const filter = fields(r, get(o, 'filter'), `${path}.filter`, ['expression']);
  if (filter) {
    const expression = str(r, get(filter, 'expression'), `${path}.filter.expression`);
    // istiod parses it as CEL: an empty expression does not parse.
    if (expression === undefined || expression.trim() === '')
      r.error(`${path}.filter.expression`, 'must be a valid CEL expression, got an empty one');
    else
      r.warn(
        `${path}.filter`,
        'an access log filter (CEL) is not applied by meshsnap: its providers log every request and connection',
        'unsupported-field',
      );
  }
  return compact({
    providers: names?.length ? names : undefined,
    mode: mode === 'CLIENT' || mode === 'SERVER' ? (mode as TelemetryLogMode) : undefined,
    disabled: disabled === true ? (true as const) : undefined,
  });
}

/** `metrics[]`: validated as istiod (validateTelemetryMetrics and the CRD), not applied. */
function metrics(r: Reader, v: unknown, path: string): void {
  list(r, v, path, (item, p) => {
    const o = fields(r, item, p, ['providers', 'overrides', 'reportingInterval']);
    if (!o) return undefined;
    providers(r, get(o, 'providers'), `${p}.providers`);
    const interval = duration(r, get(o, 'reportingInterval'), `${p}.reportingInterval`);
    if (interval !== undefined && interval < 1)
      r.error(`${p}.reportingInterval`, 'must be a valid duration greater than 1ms');
    list(r, get(o, 'overrides'), `${p}.overrides`, (ov, op) => {
      const x = fields(r, ov, op, ['match', 'disabled', 'tagOverrides']);
      if (!x) {
        if (ov === null) r.error(op, 'tagOverrides may not be null');
        return undefined;
      }
      bool(r, get(x, 'disabled'), `${op}.disabled`);
      const match = fields(r, get(x, 'match'), `${op}.match`, ['metric', 'customMetric', 'mode']);
      if (match) {
        oneOf(r, get(match, 'metric'), `${op}.match.metric`, METRICS);
        oneOf(r, get(match, 'mode'), `${op}.match.mode`, MODES);
        const custom = str(r, get(match, 'customMetric'), `${op}.match.customMetric`);
        if (custom === '') r.error(`${op}.match.customMetric`, 'customMetric may not be empty');
        if (custom !== undefined && get(match, 'metric') !== undefined)
          r.error(`${op}.match`, 'only one of metric or customMetric may be set', 'conflicting-fields');
      }
      mapOf(r, get(x, 'tagOverrides'), `${op}.tagOverrides`, (t, tp) => {
        if (tp.endsWith('.')) r.warn(tp, 'tagOverrides.name may not be empty', 'invalid-field');
        const to = fields(r, t, tp, ['operation', 'value']);
        if (!to) {
          if (t === null) r.error(tp, 'tagOverrides may not be null');
          return undefined;
        }
        const operation = oneOf(r, get(to, 'operation'), `${tp}.operation`, ['UPSERT', 'REMOVE']) ?? 'UPSERT';
        const value = str(r, get(to, 'value'), `${tp}.value`) ?? '';
        if (operation === 'UPSERT' && value === '')
          r.error(`${tp}.value`, 'tagOverrides.value must be set when operation is UPSERT');
        if (operation === 'REMOVE' && value !== '')
          r.error(`${tp}.value`, 'tagOverrides.value may only be set when operation is UPSERT');
        return undefined;
      });
      return undefined;
    });
    return undefined;
  });
}

const CUSTOM_TAG_KINDS: Readonly<Record<string, readonly [string, readonly string[]]>> = {
  literal: ['value', ['value']],
  environment: ['name', ['name', 'defaultValue']],
  header: ['name', ['name', 'defaultValue']],
  formatter: ['value', ['value']],
};

/**
 * One `customTags` value (validateTelemetryTracing's checks, and the CRD's oneOf: at most one kind).
 * A tag of no kind is dropped with a warning: istiod sends it without a type, which Envoy refuses.
 */
function customTag(r: Reader, t: unknown, tp: string): TelemetryCustomTag | undefined {
  if (tp.endsWith('.')) r.error(tp, 'tag name may not be empty');
  const tag = fields(r, t, tp, Object.keys(CUSTOM_TAG_KINDS));
  if (!tag) {
    if (t === null) r.error(tp, 'tag may not have a nil value');
    return undefined;
  }
  const errorsBefore = r.errorCount;
  const read: Record<string, Readonly<Record<string, string>>> = {};
  for (const [kind, [required, known]] of Object.entries(CUSTOM_TAG_KINDS)) {
    const body = fields(r, get(tag, kind), `${tp}.${kind}`, known);
    if (!body) continue;
    const values: Record<string, string> = {};
    for (const k of known) {
      const s = str(r, get(body, k), `${tp}.${kind}.${k}`);
      if (s && s.length > MAX_TAG_TEXT)
        r.error(`${tp}.${kind}.${k}`, `is longer than ${MAX_TAG_TEXT} characters`, 'too-large');
      else if (s) values[k] = s;
    }
    const value = get(body, required);
    if (value === undefined || value === '')
      r.error(`${tp}.${kind}.${required}`, `${kind} tag ${required} may not be empty`);
    read[kind] = values;
  }
  const kinds = Object.keys(read);
  if (kinds.length > 1) {
    r.error(tp, `only one of ${Object.keys(CUSTOM_TAG_KINDS).join(', ')} may be set`, 'conflicting-fields');
    return undefined;
  }
  const [kind] = kinds;
  const values = kind === undefined ? undefined : read[kind];
  if (kind === undefined || values === undefined) {
    // A kind given but refused (not an object) has its error already.
    if (r.errorCount === errorsBefore)
      r.warn(
        tp,
        'a custom tag without literal, environment, header or formatter: istiod sends it without a type, which Envoy refuses; meshsnap drops it',
        'invalid-field',
      );
    return undefined;
  }
  const named = () => compact({ name: values.name ?? '', defaultValue: values.defaultValue });
  switch (kind) {
    case 'literal':
      return { literal: values.value ?? '' };
    case 'environment':
      return { environment: named() };
    case 'header':
      return { header: named() };
    default:
      r.warn(
        `${tp}.formatter`,
        'a formatter custom tag is not applied: the Envoy API meshsnap encodes has no formatter custom tag (Istio 1.29+ proxies); spans go without this tag',
        'unsupported-field',
      );
      return { formatter: values.value ?? '' };
  }
}

const TRACING_BOOLS = [
  'disableSpanReporting',
  'useRequestIdForTraceSampling',
  'enableIstioTags',
  'disableContextPropagation',
] as const;

/** `tracing[]`: validated as istiod (validateTelemetryTracing), each entry as istiod's Telemetries.Tracing merges it. */
function tracing(r: Reader, v: unknown, path: string): TelemetryTracing[] | undefined {
  const items = list(r, v, path, (item, p) => {
    const o = fields(r, item, p, [
      'match',
      'providers',
      'randomSamplingPercentage',
      'disableSpanReporting',
      'customTags',
      'useRequestIdForTraceSampling',
      'enableIstioTags',
      'disableContextPropagation',
    ]);
    if (!o) return undefined;
    const match = fields(r, get(o, 'match'), `${p}.match`, ['mode']);
    const mode = match ? oneOf(r, get(match, 'mode'), `${p}.match.mode`, MODES) : undefined;
    const names = providers(r, get(o, 'providers'), `${p}.providers`);
    if ((names?.length ?? 0) > 1)
      r.warn(`${p}.providers`, 'multiple providers is not currently supported', 'invalid-field');
    const pct = num(r, get(o, 'randomSamplingPercentage'), `${p}.randomSamplingPercentage`);
    if (pct !== undefined && (pct < 0 || pct > 100))
      r.error(`${p}.randomSamplingPercentage`, 'randomSamplingPercentage must be in range [0.0, 100.0]');
    const flags: Partial<Record<(typeof TRACING_BOOLS)[number], boolean>> = {};
    for (const k of TRACING_BOOLS) flags[k] = bool(r, get(o, k), `${p}.${k}`);
    if (flags.disableContextPropagation === true)
      r.warn(
        `${p}.disableContextPropagation`,
        'disableContextPropagation is not applied: the Envoy API meshsnap encodes has no HttpConnectionManager no_context_propagation (Istio 1.30+ proxies); trace context headers are still propagated',
        'unsupported-field',
      );
    // Every tag goes on every HCM the Telemetry reaches: bounded as the ProxyConfig's are.
    const tagsRaw = get(o, 'customTags');
    const tagNames = tagsRaw !== null && typeof tagsRaw === 'object' ? Object.keys(tagsRaw) : [];
    if (tagNames.length > MAX_CUSTOM_TAGS)
      r.error(`${p}.customTags`, `has more than ${MAX_CUSTOM_TAGS} tags`, 'too-large');
    else if (tagNames.some((n) => n.length > MAX_TAG_TEXT))
      r.error(`${p}.customTags`, `has a tag name longer than ${MAX_TAG_TEXT} characters`, 'too-large');
    const customTags = mapOf(r, tagsRaw, `${p}.customTags`, (t, tp) => customTag(r, t, tp));
    return compact({
      mode: mode === 'CLIENT' || mode === 'SERVER' ? (mode as TelemetryLogMode) : undefined,
      providers: names?.length ? names : undefined,
      disableSpanReporting: flags.disableSpanReporting,
      customTags,
      randomSamplingPercentage: pct,
      useRequestIdForTraceSampling: flags.useRequestIdForTraceSampling,
      enableIstioTags: flags.enableIstioTags,
      disableContextPropagation: flags.disableContextPropagation,
    });
  });
  if ((items?.length ?? 0) > 1) r.warn(path, 'multiple tracing is not currently supported', 'invalid-field');
  return items;
}

interface Selection {
  /** Not namespace-wide. */
  readonly selects: boolean;
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly targetRefs?: readonly TelemetryTargetRef[];
}

/** What it selects; checks `selector` (istiod's validateWorkloadSelector) and `targetRef(s)` (same namespace only). */
function selection(r: Reader, spec: Raw): Selection {
  const selector = workloadSelector(r, get(spec, 'selector'), 'spec.selector');
  const labels = selector?.matchLabels;
  const matchLabels = labels && Object.keys(labels).length > 0 ? labels : undefined;
  const ref = readTargetRef(r, get(spec, 'targetRef'), 'spec.targetRef');
  const many = list(r, get(spec, 'targetRefs'), 'spec.targetRefs', (item, p) => readTargetRef(r, item, p), 16);
  const named: [string, { readonly namespace?: string }][] = many?.map((m, i) => [`spec.targetRefs[${i}]`, m]) ?? [];
  if (ref) named.push(['spec.targetRef', ref]);
  for (const [at, x] of named)
    if (x.namespace) r.error(`${at}.namespace`, 'cross namespace referencing is not currently supported');
  const set = [selector, ref, many?.length ? many : undefined].filter((x) => x !== undefined).length;
  if (set > 1) r.error('spec', 'only one of selector, targetRef or targetRefs may be set', 'conflicting-fields');
  // istiod's GetTargetRefs: targetRefs, else targetRef.
  const refs = many?.length
    ? many.map((m, i) => [`spec.targetRefs[${i}]`, m] as const)
    : ref
      ? [['spec.targetRef', ref] as const]
      : [];
  for (const [at, x] of refs) {
    if (isGatewayRef(x)) continue;
    if (WAYPOINT_KINDS.has(`${canonicalGroup(x.group)}/${x.kind}`))
      r.warn(
        at,
        `a targetRef to a ${x.kind} attaches the Telemetry to waypoints only, which meshsnap does not serve: not applied`,
        'unsupported-field',
      );
    else
      r.warn(
        at,
        `istiod attaches a Telemetry's targetRef to the pods of a Gateway API Gateway (${GATEWAY_API_GROUP}, kind Gateway) or to waypoints, not to a ${x.kind}: it selects no proxy`,
        'policy-not-applied',
      );
  }
  const targetRefs = refs.map(([, x]) => compact({ group: x.group, kind: x.kind, name: x.name }));
  // istiod's namespace-wide test: no matchLabels and no targetRefs (an empty selector selects nothing less).
  return compact({
    selects: matchLabels !== undefined || targetRefs.length > 0,
    matchLabels,
    targetRefs: targetRefs.length ? targetRefs : undefined,
  });
}

/** The kinds istiod attaches to waypoints only (ShouldAttachPolicy). */
const WAYPOINT_KINDS = new Set([
  'core/Service',
  'networking.istio.io/ServiceEntry',
  `${GATEWAY_API_GROUP}/GatewayClass`,
]);

export function readTelemetry(r: Reader, raw: Raw, origin: Origin, apiVersion: string): Telemetry | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const created = readCreationTimestamp(r, raw);
  const spec =
    fields(r, get(raw, 'spec'), 'spec', [
      'selector',
      'targetRef',
      'targetRefs',
      'accessLogging',
      'tracing',
      'metrics',
    ]) ?? {};
  const selected = selection(r, spec);
  const logging = list(r, get(spec, 'accessLogging'), 'spec.accessLogging', (item, p) => accessLogging(r, item, p));
  const traced = tracing(r, get(spec, 'tracing'), 'spec.tracing');
  metrics(r, get(spec, 'metrics'), 'spec.metrics');
  if (!meta || r.failed) return undefined;
  if (get(spec, 'metrics') !== undefined)
    r.warn(
      'spec.metrics',
      'Telemetry metrics is not applied by meshsnap (only accessLogging and tracing are)',
      'unsupported-field',
    );
  return {
    kind: 'Telemetry',
    apiVersion,
    meta,
    ...(created ? { creationTimestamp: created } : {}),
    origin,
    ...(selected.selects ? { selects: true as const } : {}),
    ...(selected.matchLabels ? { matchLabels: selected.matchLabels } : {}),
    ...(selected.targetRefs ? { targetRefs: selected.targetRefs } : {}),
    ...(logging?.length ? { accessLogging: logging } : {}),
    ...(traced?.length ? { tracing: traced } : {}),
  };
}
