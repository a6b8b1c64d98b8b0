/**
 * Diagnostics: what meshsnap says about its inputs. Every diagnostic names where the problem is
 * (file, document index, kind, namespace/name, field path) so a user can find and fix it.
 */
import type { ObjectStatus } from './object-status.js';

export type Severity = 'error' | 'warning' | 'info';

export interface Diagnostic {
  readonly severity: Severity;
  /** A stable machine-readable code, e.g. `invalid-field`, `unknown-subset`, `unsupported-kind`. */
  readonly code: string;
  readonly message: string;
  readonly file?: string;
  /** 0-based index of the document inside its file. */
  readonly index?: number;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** Dotted field path inside the object, e.g. `spec.http[0].route[1].weight`. */
  readonly field?: string;
  /** Code `gateway-api-status` only: the status subresource computed for the object (see object-status.ts). */
  readonly status?: ObjectStatus;
}

/** Where an object came from. */
export interface Origin {
  readonly file?: string;
  readonly index?: number;
}

/**
 * Where a diagnostic about a namespaced object points: its kind, namespace/name, the field when
 * given, and its origin (in that order: the JSON forms show it).
 */
export function objectAt(
  kind: string,
  o: { readonly meta: { readonly namespace: string; readonly name: string }; readonly origin: Origin },
  field?: string,
): { kind: string; namespace: string; name: string; field?: string; file?: string; index?: number } {
  return {
    kind,
    namespace: o.meta.namespace,
    name: o.meta.name,
    ...(field !== undefined ? { field } : {}),
    ...(o.origin.file !== undefined ? { file: o.origin.file } : {}),
    ...(o.origin.index !== undefined ? { index: o.origin.index } : {}),
  };
}

/** Collects diagnostics; translators get one and never throw on user data. */
export class Diagnostics {
  private readonly items: Diagnostic[] = [];

  add(d: Diagnostic): void {
    this.items.push(d);
  }

  error(d: Omit<Diagnostic, 'severity'>): void {
    this.add({ severity: 'error', ...d });
  }

  warn(d: Omit<Diagnostic, 'severity'>): void {
    this.add({ severity: 'warning', ...d });
  }

  info(d: Omit<Diagnostic, 'severity'>): void {
    this.add({ severity: 'info', ...d });
  }

  get all(): readonly Diagnostic[] {
    return this.items;
  }

  /** Diagnostics in a canonical order, so that equal inputs give equal snapshots. */
  sorted(): Diagnostic[] {
    return sortDiagnostics(this.items);
  }
}

const KEYS = ['kind', 'namespace', 'name', 'field', 'code', 'severity', 'message', 'file'] as const;

export function sortDiagnostics(items: readonly Diagnostic[]): Diagnostic[] {
  return [...items].sort((a, b) => {
    for (const k of KEYS) {
      const x = a[k] ?? '';
      const y = b[k] ?? '';
      if (x !== y) return x < y ? -1 : 1;
    }
    return (a.index ?? 0) - (b.index ?? 0);
  });
}

export function countBySeverity(items: readonly Diagnostic[]): { error: number; warning: number } {
  let error = 0;
  let warning = 0;
  for (const d of items) {
    if (d.severity === 'error') error++;
    else if (d.severity === 'warning') warning++;
  }
  return { error, warning };
}

/** One line for people: `error file.yaml#2 VirtualService default/reviews spec.http[0]: message`. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.file !== undefined ? `${d.file}${d.index !== undefined ? `#${d.index}` : ''} ` : '';
  const obj = d.kind ? `${d.kind} ${d.namespace ? `${d.namespace}/` : ''}${d.name ?? ''} ` : '';
  return `${d.severity} ${where}${obj}${d.field ? `${d.field}: ` : ''}${d.message} [${d.code}]`;
}
