/**
 * SotW response bodies, keyed by the resources map they are made of (plus its version and the
 * subscription). Built lazily by the first stream that needs one and reused by every other stream
 * that gets the same map: classes whose groups hold the same tables share one map (served-snapshot.ts),
 * so they share one body, and a switch that leaves a map alone (the next snapshot takes the very same
 * map object) leaves its bodies alone too: only the bodies of what changed are encoded again.
 *
 * Memory: a cache keeps its own bodies and looks back only one generation (the cache of the
 * snapshot before), taking over what is still in use; older bodies go with their snapshot.
 *
 * A switch's pushes carry one nonce, the cache's `pushNonce`: each stream gets at most one push per
 * type per switch, and that nonce is taken from the server's counter like every other, so it still
 * names one response per stream and type. So a body's push (the gRPC frame of body ‖ nonce) is laid
 * out once and the very same buffer is written to every stream that gets it: no per-stream copy of a
 * body (a new Service's CDS body to 1k streams was 1k fresh 10 KB buffers per switch).
 */
import { XDS_TYPE_URL, type XdsType } from '../../xds/type-urls.js';
import type { ServedResource, ServedSnapshot } from '../types.js';
import type { Frame } from './grpc-frames.js';
import { contentKeyOf, framedWithNonce, lazySotwBody, type SotwBody } from './responses.js';

/** A subscription key: '*' for wildcard, else the sorted names joined by '\n'. */
export const WILDCARD_KEY = '*';

type ResourceMap = ReadonlyMap<string, ServedResource>;
/** Bodies of one map by subscription key (the map's version is checked on use). */
type Bodies = Map<string, SotwBody>;
/** Per type: bodies by the resources map they are made of. */
type ByMap = Record<XdsType, WeakMap<ResourceMap, Bodies>>;

const EMPTY: ResourceMap = new Map();
const byMap = (): ByMap => ({
  clusters: new WeakMap(),
  endpoints: new WeakMap(),
  listeners: new WeakMap(),
  routes: new WeakMap(),
});

export class SotwCache {
  private readonly bodies = byMap();
  private readonly before: ByMap | undefined;
  private readonly pushed = new WeakMap<SotwBody, Frame>();
  private count = 0;

  /**
   * `pushNonce`: the nonce of this switch's pushes, a fresh one from the server's counter (never
   * empty: an empty nonce is no nonce). `previous`: the cache of the snapshot served before, whose
   * bodies of unchanged maps are taken over.
   */
  constructor(
    readonly snapshot: ServedSnapshot,
    readonly pushNonce: string,
    previous?: SotwCache,
  ) {
    if (pushNonce === '') throw new Error('SotwCache: a push nonce must not be empty');
    this.before = previous?.bodies;
  }

  /** The frame of a body with the switch's nonce appended, laid out once and shared by every stream it is pushed to. */
  pushFrame(body: SotwBody): Frame {
    let frame = this.pushed.get(body);
    if (!frame) this.pushed.set(body, (frame = framedWithNonce(body.prefix, this.pushNonce)));
    return frame;
  }

  /** Bodies this cache holds (built or taken over). */
  get size(): number {
    return this.count;
  }

  /**
   * The body for a class and type: all resources (wildcard) or exactly the subscribed names that
   * exist. Called for every stream on every switch: looked up without building a key.
   */
  body(classId: string, type: XdsType, subscriptionKey: string): SotwBody {
    const all = this.snapshot.resources(classId, type) ?? EMPTY;
    const version = this.snapshot.typeVersion(classId, type);
    let bodies = this.bodies[type].get(all);
    if (!bodies) this.bodies[type].set(all, (bodies = new Map()));
    let body = bodies.get(subscriptionKey);
    if (body?.version !== version) {
      const before = this.before?.[type].get(all)?.get(subscriptionKey);
      body = before?.version === version ? before : encode(type, all, version, subscriptionKey);
      bodies.set(subscriptionKey, body);
      this.count++;
    }
    return body;
  }
}

function encode(type: XdsType, all: ResourceMap, version: string, subscriptionKey: string): SotwBody {
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
  return lazySotwBody(XDS_TYPE_URL[type], version, list, contentKey);
}

const byName = (a: ServedResource, b: ServedResource): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
