/**
 * The CRD field sweep (test/inputs/crd-field-sweep.test.ts for Istio's kinds,
 * gateway-api-crd-field-sweep.test.ts for the Gateway API's): configuration moved to meshsnap must
 * never be lost silently. For every kind meshsnap reads, the CRD schema of the served version it
 * reads (v1 where the CRD serves it, else the first served one) is walked; for each property path a
 * minimal object of that kind setting that field (a value of the schema's type, lists and objects
 * nested, on a skeleton that fills what the kind requires) goes through meshsnap's validator
 * (loadText, as the other inputs tests), and:
 *
 * - no `unknown-field` is reported at that path or above it, unless an explicit warning
 *   (`unsupported-field` or `ignored-field`) names the path or an ancestor (a field meshsnap
 *   deliberately does not apply, said so);
 * - every object of the schema (not a free-form map) is walked with a known-field list: a probe
 *   key set in it is reported `unknown-field` (or sits under an explicit warning). So a field a
 *   future CRD adds anywhere fails the first check, and an object read without a field list (where
 *   a new field would be dropped without a word) fails the second.
 *
 * Unions keyed by a `type` enum (the Gateway API's filters and path modifiers: `type:
 * URLRewrite` with `urlRewrite`) get the type naming the member set, so the validator reads it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import { loadText } from '../inputs/helpers.js';

/** The probe key set in every schema object: no CRD will ever name a field so. */
const PROBE = 'zzMeshsnapSweepProbe';
const EXPLICIT = new Set(['unsupported-field', 'ignored-field']);

export interface Schema {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly items?: Schema;
  readonly additionalProperties?: Schema | boolean;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly format?: string;
  readonly default?: unknown;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
}

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** A kind the sweep covers: its API group and a skeleton spec its validator accepts. */
export interface SweepKind {
  readonly group: string;
  readonly skeleton: { [k: string]: Json };
}

interface Crd {
  readonly version: string;
  readonly spec: Schema;
}

/** The spec schema of the served version meshsnap reads (v1 where served, else the first served) per kind. */
export function loadCrds(file: string, kinds: Readonly<Record<string, SweepKind>>): Map<string, Crd> {
  const out = new Map<string, Crd>();
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
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
    if (kinds[kind]?.group !== crd.spec.group) continue;
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
export function walk(schema: Schema, steps: Step[] = [], out: Path[] = []): Path[] {
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

/** The `type` enum value naming member `prop` of a union (`urlRewrite` → `URLRewrite`), if any. */
function unionType(schema: Schema, prop: string): string | undefined {
  const values = schema.properties?.type?.enum;
  return values?.find((v): v is string => typeof v === 'string' && v.toLowerCase() === prop.toLowerCase());
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
    const member = unionType(schema, st.prop);
    if (member !== undefined) o['type'] = member;
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

function validate(group: string, kind: string, version: string, spec: Json): readonly Diagnostic[] {
  const doc = { apiVersion: `${group}/${version}`, kind, metadata: { name: 'sweep', namespace: 'ns1' }, spec };
  return loadText(JSON.stringify(doc)).diagnostics;
}

/** `field` is `path` or below it. */
const under = (field: string, path: string): boolean =>
  field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`);

const explicitlyNotApplied = (diags: readonly Diagnostic[], field: string): boolean =>
  diags.some((d) => d.severity === 'warning' && EXPLICIT.has(d.code) && d.field !== undefined && under(field, d.field));

/** The CRD fields `validate` drops as unknown (neither known nor explicitly not applied), one line each. */
export function lostFields(kind: string, sk: SweepKind, crd: Crd): string[] {
  const lost: string[] = [];
  for (const p of walk(crd.spec)) {
    const spec = merge(
      sk.skeleton,
      fragment(crd.spec, p.steps, (s) => valueOf(s)),
    );
    const diags = validate(sk.group, kind, crd.version, spec);
    const field = fieldName(p.steps);
    const unknown = diags.filter((d) => d.code === 'unknown-field' && d.field !== undefined && under(field, d.field));
    if (unknown.length > 0 && !explicitlyNotApplied(diags, field))
      lost.push(`${p.name}: ${unknown.map((d) => `${d.field} ${d.message}`).join('; ')}`);
  }
  return lost;
}

/** The CRD objects whose unknown keys `validate` does not report (read without a known-field list). */
export function uncheckedObjects(kind: string, sk: SweepKind, crd: Crd): string[] {
  const unchecked: string[] = [];
  const objects = [{ steps: [] as Step[], schema: crd.spec, name: 'spec' }, ...walk(crd.spec)].filter(
    (p) => p.schema.properties !== undefined,
  );
  for (const p of objects) {
    const frag = fragment(crd.spec, p.steps, (s) => ({ ...requiredOf(s), [PROBE]: 'x' }));
    const diags = validate(sk.group, kind, crd.version, merge(sk.skeleton, frag));
    const field = `${fieldName(p.steps)}.${PROBE}`;
    const reported = diags.some((d) => d.code === 'unknown-field' && d.field === field);
    if (!reported && !explicitlyNotApplied(diags, field)) unchecked.push(p.name);
  }
  return unchecked;
}

/**
 * Registers the sweep's tests for `kinds` over the CRDs in `file`; `label` (the fixture's release)
 * prefixes the test names when one file sweeps several fixtures.
 */
export function crdSweepTests(file: string, kinds: Readonly<Record<string, SweepKind>>, label = ''): void {
  const crds = loadCrds(file, kinds);
  const prefix = label ? `${label} ` : '';

  test(`${prefix}the fixture holds a CRD for every kind the sweep covers`, () => {
    assert.deepEqual([...crds.keys()].sort(), Object.keys(kinds).sort());
  });

  for (const [kind, sk] of Object.entries(kinds)) {
    const crd = crds.get(kind);
    if (!crd) continue;

    test(`${prefix}${kind} ${crd.version}: every CRD field is known to the validator or explicitly not applied`, () => {
      assert.ok(walk(crd.spec).length > 0);
      const lost = lostFields(kind, sk, crd);
      assert.deepEqual(lost, [], `${lost.length} CRD fields dropped as unknown`);
    });

    test(`${prefix}${kind} ${crd.version}: every CRD object is read with a known-field list`, () => {
      const unchecked = uncheckedObjects(kind, sk, crd);
      assert.deepEqual(unchecked, [], `${unchecked.length} CRD objects whose unknown fields go unreported`);
    });
  }
}
