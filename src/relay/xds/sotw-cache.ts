/**
 * SotW response bodies of one snapshot, keyed by class + type + subscription. Built lazily by the
 * first stream that needs one and reused by every other stream of the class; dropped with the
 * snapshot.
 */
import { XDS_TYPE_URL, type XdsType } from '../../xds/type-urls.js';
import type { ServedResource, ServedSnapshot } from '../types.js';
import { contentKeyOf, encodeSotwBody, type SotwBody } from './responses.js';

/** A subscription key: '*' for wildcard, else the sorted names joined by '\n'. */
export const WILDCARD_KEY = '*';

export class SotwCache {
  private readonly bodies = new Map<string, SotwBody>();

  constructor(readonly snapshot: ServedSnapshot) {}

  get size(): number {
    return this.bodies.size;
  }

  /** The body for a class and type: all resources (wildcard) or exactly the subscribed names that exist. */
  body(classId: string, type: XdsType, subscriptionKey: string): SotwBody {
    const key = `${classId}\0${type}\0${subscriptionKey}`;
    let body = this.bodies.get(key);
    if (!body) {
      const all = this.snapshot.resources(classId, type) ?? new Map<string, ServedResource>();
      const version = this.snapshot.typeVersion(classId, type);
      let list: ServedResource[];
      let contentKey: string;
      if (subscriptionKey === WILDCARD_KEY) {
        list = [...all.values()].sort(byName);
        contentKey = `v:${version}`; // typeVersion changes iff the class's resources of the type change
      } else {
        list = subscriptionKey
          .split('\n')
          .map((n) => all.get(n))
          .filter((r): r is ServedResource => r !== undefined);
        contentKey = `n:${contentKeyOf(list)}`;
      }
      body = encodeSotwBody(XDS_TYPE_URL[type], version, list, contentKey);
      this.bodies.set(key, body);
    }
    return body;
  }
}

const byName = (a: ServedResource, b: ServedResource): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
