/**
 * Last known good, per object. istiod's validating webhook keeps a bad object out of the cluster;
 * without it (webhook off, a CRD applied with --validate=false, a new field the webhook does not
 * know) an object that compiled yesterday can turn invalid. Dropping it would silently remove
 * routes that worked, so, as long as its current version is invalid, the watcher keeps compiling
 * the last valid one, says so with a `last-known-good` warning, and records the substitution in
 * the version's provenance. An object that was never valid is compiled as it is (the inputs layer
 * reports and skips it); a delete forgets everything about the object.
 *
 * An object's first version cannot be substituted (there is nothing before it), so it is validated
 * only when a second version arrives: the watcher's first round does not validate every object
 * once more before its compile validates them all anyway.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import { buildInputSet } from '../inputs/load.js';
import { keyString } from '../snapshot/stored-inputs/index.js';
import type { LastKnownGoodSubstitution } from '../snapshot/manifest.js';
import type { CachedObject } from './object-cache.js';

/** The first error the inputs validators report for this object alone, or undefined when it is valid. */
export function firstValidationError(o: CachedObject): Diagnostic | undefined {
  if (o.read) return undefined; // read on arrival without any diagnostic (object-cache.ts)
  const { diagnostics } = buildInputSet([{ file: keyString(o.key), index: 0, object: o.object }]);
  return diagnostics.find((d) => d.severity === 'error');
}

export class LastKnownGood {
  private readonly good = new Map<string, CachedObject>();
  /** An object's first version, not validated yet: `good` once it validates (`settle`). */
  private readonly unchecked = new Map<string, CachedObject>();
  private readonly substituted = new Map<
    string,
    { readonly use: CachedObject; readonly record: LastKnownGoodSubstitution }
  >();

  constructor(private readonly validate: (o: CachedObject) => Diagnostic | undefined = firstValidationError) {}

  /** Reviews a new version of an object; returns the substitution it caused, if any. */
  review(o: CachedObject): LastKnownGoodSubstitution | undefined {
    const k = keyString(o.key);
    if (!this.good.has(k) && !this.unchecked.has(k)) {
      this.unchecked.set(k, o);
      return undefined;
    }
    this.settle(k);
    const error = this.validate(o);
    if (!error) {
      this.good.set(k, o);
      this.substituted.delete(k);
      return undefined;
    }
    const previous = this.good.get(k);
    if (!previous) {
      this.substituted.delete(k);
      return undefined;
    }
    const record: LastKnownGoodSubstitution = {
      kind: o.key.kind,
      namespace: o.key.namespace,
      name: o.key.name,
      ...(o.resourceVersion !== undefined ? { rejectedResourceVersion: o.resourceVersion } : {}),
      ...(previous.resourceVersion !== undefined ? { usedResourceVersion: previous.resourceVersion } : {}),
      ...(error.field !== undefined ? { field: error.field } : {}),
      message: error.message,
    };
    this.substituted.set(k, { use: previous, record });
    return record;
  }

  /** The first version becomes the last good one if it is valid (what reviewing it at once would have found). */
  private settle(k: string): void {
    const first = this.unchecked.get(k);
    if (!first) return;
    this.unchecked.delete(k);
    if (!this.validate(first)) this.good.set(k, first);
  }

  forget(key: string): void {
    this.unchecked.delete(key);
    this.good.delete(key);
    this.substituted.delete(key);
  }

  /** What to compile for this object: its last good version while the current one is invalid. */
  resolve(o: CachedObject): CachedObject {
    return this.substituted.get(keyString(o.key))?.use ?? o;
  }

  isSubstituted(key: string): boolean {
    return this.substituted.has(key);
  }

  /** Substitutions in force, sorted by key. */
  substitutions(): LastKnownGoodSubstitution[] {
    return [...this.substituted.keys()]
      .sort()
      .map((k) => (this.substituted.get(k) as { record: LastKnownGoodSubstitution }).record);
  }

  /** One warning per substitution, naming the object and the field that failed. */
  diagnostics(): Diagnostic[] {
    return this.substitutions().map((s) => ({
      severity: 'warning',
      code: 'last-known-good',
      message:
        `${s.kind} ${s.namespace ? `${s.namespace}/` : ''}${s.name}` +
        `${s.rejectedResourceVersion ? ` (resourceVersion ${s.rejectedResourceVersion})` : ''} is invalid: ${s.message}; ` +
        `compiling its last valid version${s.usedResourceVersion ? ` (resourceVersion ${s.usedResourceVersion})` : ''} instead`,
      kind: s.kind,
      ...(s.namespace ? { namespace: s.namespace } : {}),
      name: s.name,
      ...(s.field !== undefined ? { field: s.field } : {}),
    }));
  }
}
