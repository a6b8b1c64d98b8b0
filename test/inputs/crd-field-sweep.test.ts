/**
 * CRD field sweep: configuration moved to meshsnap must never be lost silently. For every Istio
 * kind meshsnap reads, the CRD schema of the version it reads (v1 where the CRD serves it) is
 * taken from the shared fixture (Istio's manifests/charts/base/files/crd-all.gen.yaml) and walked;
 * for each property path a minimal object of that kind setting that field (a value of the
 * schema's type, lists and objects nested, on a skeleton that fills what the kind requires) goes
 * through meshsnap's validator (loadText, as the other inputs tests), and:
 *
 * - no `unknown-field` is reported at that path or above it, unless an explicit warning
 *   (`unsupported-field` or `ignored-field`) names the path or an ancestor (a field meshsnap
 *   deliberately does not apply, said so);
 * - every object of the schema (not a free-form map) is walked with a known-field list: a probe
 *   key set in it is reported `unknown-field` (or sits under an explicit warning). So a field a
 *   future CRD adds anywhere fails the first check, and an object read without a field list (where
 *   a new field would be dropped without a word) fails the second.
 *
 * A new CRD (a fixture bump) whose fields the validators do not know makes this test fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import { FIXTURES } from '../helpers/paths.js';
import { loadText } from './helpers.js';

const CRDS = join(FIXTURES, 'istio', 'manifests', 'charts', 'base', 'files', 'crd-all.gen.yaml');

/** The probe key set in every schema object: no CRD will ever name a field so. */
const PROBE = 'zzMeshsnapSweepProbe';
const EXPLICIT = new Set(['unsupported-field', 'ignored-field']);

interface Schema {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly items?: Schema;
  readonly additionalProperties?: Schema | boolean;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly format?: string;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
}

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** A skeleton per kind: what its validator needs to get past the required parts. */
const KINDS: Readonly<Record<string, { group: string; skeleton: { [k: string]: Json } }>> = {
  VirtualService: {
    group: 'networking.istio.io',
    skeleton: {
      hosts: ['a.ns1.svc.cluster.local'],
      http: [{ route: [{ destination: { host: 'a' } }] }],
      tcp: [{ route: [{ destination: { host: 'a' } }] }],
      tls: [{ match: [{ sniHosts: ['a'] }], route: [{ destination: { host: 'a' } }] }],
    },
  },
  DestinationRule: { group: 'networking.istio.io', skeleton: { host: 'a' } },
  Gateway: {
    group: 'networking.istio.io',
    skeleton: { servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*/a.example.com'] }] },
  },
  ServiceEntry: {
    group: 'networking.istio.io',
    skeleton: { hosts: ['a.example.com'], ports: [{ number: 80, name: 'http', protocol: 'HTTP' }], resolution: 'DNS' },
  },
  WorkloadEntry: { group: 'networking.istio.io', skeleton: { address: '10.0.0.1' } },
  WorkloadGroup: { group: 'networking.istio.io', skeleton: { template: {} } },
  // ALLOW_ANY: an egressProxy is read only with it.
  Sidecar: {
    group: 'networking.istio.io',
    skeleton: { egress: [{ hosts: ['./*'] }], outboundTrafficPolicy: { mode: 'ALLOW_ANY' } },
  },
  PeerAuthentication: { group: 'security.istio.io', skeleton: {} },
  AuthorizationPolicy: { group: 'security.istio.io', skeleton: {} },
  RequestAuthentication: { group: 'security.istio.io', skeleton: { jwtRules: [{ issuer: 'https://issuer.example' }] } },
};

interface Crd {
  readonly version: string;
  readonly spec: Schema;
}

function loadCrds(): Map<string, Crd> {
  const out = new Map<string, Crd>();
  for (const doc of parseAllDocuments(readFileSync(CRDS, 'utf8'))) {
    const crd = doc.toJSON() as {
      kind?: string;
      spec?: {
        group: string;
        names: { kind: string };
        versions: { name: string; served: boolean; schema: { openAPIV3Schema: Schema } }[];
      };
    } | null;
    if (crd?.kind !== 'CustomResourceDefinition' || !crd.spec) continue;
    const kind = crd.spec.names.kind;
    if (KINDS[kind]?.group !== crd.spec.group) continue;
    const served = crd.spec.versions.filter((v) => v.served);
    const version = served.find((v) => v.name === 'v1') ?? served[0];
    const spec = version?.schema.openAPIV3Schema.properties?.spec;
    if (version && spec) out.set(kind, { version: version.name, spec });
  }
  return out;
}

/** One step of a schema path: a property, a list's item ([]), a map's value ({}). */
type Step = { readonly prop: string } | { readonly item: true } | { readonly value: true };

interface Path {
  readonly steps: readonly Step[];
  readonly schema: Schema;
  /** Schema notation: spec.http[].match[].headers{}.exact */
  readonly name: string;
}

const MAP_KEY = 'k1';

function pathName(steps: readonly Step[]): string {
  let s = 'spec';
  for (const st of steps) s += 'prop' in st ? `.${st.prop}` : 'item' in st ? '[]' : '{}';
  return s;
}

/** The diagnostic field path of a schema path in the objects built here (item 0, map key k1). */
function fieldName(steps: readonly Step[]): string {
  let s = 'spec';
  for (const st of steps) s += 'prop' in st ? `.${st.prop}` : 'item' in st ? '[0]' : `.${MAP_KEY}`;
  return s;
}

/** Every property path (and every object) of a schema, depth first. */
function walk(schema: Schema, steps: Step[] = [], out: Path[] = []): Path[] {
  for (const [prop, sub] of Object.entries(schema.properties ?? {})) {
    const at = [...steps, { prop }];
    out.push({ steps: at, schema: sub, name: pathName(at) });
    walk(sub, at, out);
  }
  if (schema.items) walk(schema.items, [...steps, { item: true }], out);
  if (typeof schema.additionalProperties === 'object')
    walk(schema.additionalProperties, [...steps, { value: true }], out);
  return out;
}

/** A value of the schema's type: the first enum value, 1 for numbers, nested lists and objects. */
function valueOf(schema: Schema, depth = 0): Json {
  if (schema.enum?.length) return schema.enum[0] as Json;
  if (schema['x-kubernetes-int-or-string']) return 1;
  switch (schema.type) {
    case 'string':
      return schema.format === 'date-time' ? '2024-01-01T00:00:00Z' : 'v';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return schema.items && depth < 8 ? [valueOf(schema.items, depth + 1)] : [];
    default:
      return requiredOf(schema, depth);
  }
}

/** An object with the schema's required properties set (minimal). */
function requiredOf(schema: Schema, depth = 0): { [k: string]: Json } {
  const o: { [k: string]: Json } = {};
  if (depth > 8) return o;
  for (const key of schema.required ?? []) {
    const sub = schema.properties?.[key];
    if (sub) o[key] = valueOf(sub, depth + 1);
  }
  return o;
}

/** The spec fragment that sets `leaf` at `steps`, required siblings filled on the way. */
function fragment(root: Schema, steps: readonly Step[], leaf: (s: Schema) => Json): Json {
  const build = (schema: Schema, i: number): Json => {
    if (i === steps.length) return leaf(schema);
    const st = steps[i]!;
    if ('item' in st) return [build(schema.items ?? {}, i + 1)];
    if ('value' in st) {
      const sub = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {};
      return { [MAP_KEY]: build(sub, i + 1) };
    }
    const o = requiredOf(schema);
    o[st.prop] = build(schema.properties?.[st.prop] ?? {}, i + 1);
    return o;
  };
  return build(root, 0);
}

const isObj = (v: Json | undefined): v is { [k: string]: Json } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The skeleton with `frag` laid over it: objects merged, a list's first item merged with the skeleton's. */
function merge(base: Json | undefined, frag: Json): Json {
  if (Array.isArray(frag) && Array.isArray(base) && base.length > 0 && frag.length > 0)
    return [merge(base[0], frag[0]!), ...base.slice(1)];
  if (isObj(frag) && isObj(base)) {
    const out: { [k: string]: Json } = { ...base };
    for (const [k, v] of Object.entries(frag)) out[k] = merge(base[k], v);
    return out;
  }
  return frag;
}

function validate(kind: string, version: string, spec: Json): readonly Diagnostic[] {
  const doc = {
    apiVersion: `${KINDS[kind]!.group}/${version}`,
    kind,
    metadata: { name: 'sweep', namespace: 'ns1' },
    spec,
  };
  return loadText(JSON.stringify(doc)).diagnostics;
}

/** `field` is `path` or below it. */
const under = (field: string, path: string): boolean =>
  field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`);

const explicitlyNotApplied = (diags: readonly Diagnostic[], field: string): boolean =>
  diags.some((d) => d.severity === 'warning' && EXPLICIT.has(d.code) && d.field !== undefined && under(field, d.field));

const crds = loadCrds();

test('the fixture holds a CRD for every kind the sweep covers', () => {
  assert.deepEqual([...crds.keys()].sort(), Object.keys(KINDS).sort());
});

for (const [kind, { skeleton }] of Object.entries(KINDS)) {
  const crd = crds.get(kind);
  if (!crd) continue;
  const paths = walk(crd.spec);

  test(`${kind} ${crd.version}: every CRD field is known to the validator or explicitly not applied`, () => {
    const lost: string[] = [];
    let checked = 0;
    for (const p of paths) {
      checked++;
      const diags = validate(
        kind,
        crd.version,
        merge(
          skeleton,
          fragment(crd.spec, p.steps, (s) => valueOf(s)),
        ),
      );
      const field = fieldName(p.steps);
      const unknown = diags.filter((d) => d.code === 'unknown-field' && d.field !== undefined && under(field, d.field));
      if (unknown.length > 0 && !explicitlyNotApplied(diags, field))
        lost.push(`${p.name}: ${unknown.map((d) => `${d.field} ${d.message}`).join('; ')}`);
    }
    assert.ok(checked > 0);
    assert.deepEqual(lost, [], `${lost.length} CRD fields dropped as unknown`);
  });

  test(`${kind} ${crd.version}: every CRD object is read with a known-field list`, () => {
    const unchecked: string[] = [];
    const objects = [{ steps: [] as Step[], schema: crd.spec, name: 'spec' }, ...paths].filter(
      (p) => p.schema.properties !== undefined,
    );
    for (const p of objects) {
      const frag = fragment(crd.spec, p.steps, (s) => ({ ...requiredOf(s), [PROBE]: 'x' }));
      const diags = validate(kind, crd.version, merge(skeleton, frag));
      const field = `${fieldName(p.steps)}.${PROBE}`;
      const reported = diags.some((d) => d.code === 'unknown-field' && d.field === field);
      if (!reported && !explicitlyNotApplied(diags, field)) unchecked.push(p.name);
    }
    assert.ok(objects.length > 0);
    assert.deepEqual(unchecked, [], `${unchecked.length} CRD objects whose unknown fields go unreported`);
  });
}
