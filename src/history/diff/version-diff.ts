/** What `diff A B` finds between two versions (index.ts computes it, format.ts prints it). */
import type { InputChange } from './inputs.js';
import type { ClassDiff } from './resources.js';

export interface VersionDiff {
  readonly from: { readonly version: string; readonly digest: string };
  readonly to: { readonly version: string; readonly digest: string };
  readonly classes: readonly ClassDiff[];
  /** Undefined when either version has no stored inputs. */
  readonly inputs?: readonly InputChange[];
}
