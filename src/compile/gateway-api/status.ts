/**
 * Status conditions as istiod writes them (pilot/pkg/config/kube/gateway/conditions.go): a
 * condition is its success reason and message unless an error replaces them and flips the status.
 */
import type { StatusCondition } from '../../model/object-status.js';

/** An error to report: a reason from the spec and a message. */
export interface ConfigError {
  readonly reason: string;
  readonly message: string;
}

export interface ConditionSpec {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  /** The status on success; the opposite when `error` is set. True by default. */
  readonly status?: 'True' | 'False';
  readonly error?: ConfigError;
}

export function condition(spec: ConditionSpec, generation: number | undefined): StatusCondition {
  const ok = spec.status ?? 'True';
  const status = spec.error ? (ok === 'True' ? 'False' : 'True') : ok;
  return {
    type: spec.type,
    status,
    reason: spec.error?.reason ?? spec.reason,
    message: spec.error?.message ?? spec.message,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/** Conditions sorted by type, as the status writer compares them. */
export const conditions = (specs: readonly ConditionSpec[], generation: number | undefined): StatusCondition[] =>
  specs.map((s) => condition(s, generation)).sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));

/** Joins two errors' messages under the first one's reason (istiod's joinErrors). */
export function joinErrors(a: ConfigError | undefined, b: ConfigError | undefined): ConfigError | undefined {
  if (!a) return b;
  if (!b) return a;
  return { reason: a.reason, message: `${a.message}; ${b.message}` };
}
