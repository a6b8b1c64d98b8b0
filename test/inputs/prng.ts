/** A small seeded PRNG for reproducible shuffles and fuzzing in tests. */
import { seededRandom } from '../../bench/synthetic.js';

export type Rand = () => number;

/** mulberry32, the same generator the benchmark's synthetic mesh uses. */
export const mulberry32: (seed: number) => Rand = seededRandom;

export const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

export function shuffle<T>(items: T[], rand: Rand): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
