/**
 * The version string of one class's resources of one type: a short hash of the sorted
 * name + digest list. It changes iff the set of (name, digest) pairs changes, so a snapshot
 * switch that leaves a proxy's resources alone leaves its versions alone (nothing is pushed).
 */
import { createHash } from 'node:crypto';
import type { ServedResource } from '../types.js';

/** 16 hex digits (64 bits): plenty to tell a class's successive versions apart, short in logs. */
export function typeVersionOf(resources: ReadonlyMap<string, ServedResource>): string {
  const h = createHash('sha256');
  const names = [...resources.keys()].sort();
  for (const name of names) h.update(`${name}\0${(resources.get(name) as ServedResource).digest}\n`);
  return h.digest('hex').slice(0, 16);
}
