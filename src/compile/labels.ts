/** Label sets as map keys. */
import { sortShortStrings } from './sorted.js';

/**
 * One string per distinct label set, whatever the key order: keys sorted, each key and value
 * prefixed with its length (unambiguous whatever the strings hold).
 */
export function labelsKey(labels: Readonly<Record<string, string>>): string {
  const keys = Object.keys(labels);
  // Labels are usually written in order already: sort only when they are not.
  for (let i = 1; i < keys.length; i++)
    if (!((keys[i - 1] as string) < (keys[i] as string))) {
      sortShortStrings(keys);
      break;
    }
  let key = '';
  for (const k of keys) {
    const v = labels[k] as string;
    key += `${k.length}:${k}${v.length}:${v}`;
  }
  return key;
}
