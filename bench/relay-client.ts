/**
 * Lightweight xDS load for the relay benchmark, run as a child process (relay.ts starts a few):
 * many raw SotW ADS bidi streams (grpc-js, the generated DiscoveryRequest codec, a DiscoveryResponse
 * read for its envelope only: ./xds-envelope.ts) that
 * subscribe by name like grpc-js-xds does and ACK every response. Many streams share one channel
 * (one HTTP/2 connection): `perChannel` streams per channel.
 *
 * Protocol over stdio, one JSON line each way per command:
 *   {"op":"open", port, streams, perChannel, firstIndex, services, wildcardClusters?}
 *                                                          → {"ok":n,"failed":k,"error"?:…}
 *   {"op":"arm", type?}                                    → {"armed":n}
 *   {"op":"wait", timeoutMs, times?}  → {"reached":n,"total":n,"first":epochMs,"last":epochMs,"times"?:[epochMs…]}
 * `arm` remembers each stream's version of `type` (default endpoints); `wait` resolves once every
 * stream received a response of that type with another version (the snapshot switch), or at the
 * timeout. Times are epoch milliseconds with sub-millisecond precision (performance.timeOrigin +
 * performance.now()), comparable across the processes of one machine. `wildcardClusters`
 * subscribes to CDS as Envoy does (every cluster of the class), so a new service reaches the stream.
 */
import * as grpc from '@grpc/grpc-js';
import { createInterface } from 'node:readline';
import { envoy } from '../src/xds/proto.js';
import { toStruct } from '../src/xds/proto.js';
import { XDS_TYPE_URL, XDS_TYPES, type XdsType } from '../src/xds/type-urls.js';
import { benchNames, BENCH_NAMESPACE } from './relay-mesh.js';
import { readResponseEnvelope, type ResponseEnvelope } from './xds-envelope.js';

const ADS_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const { DiscoveryRequest } = envoy.service.discovery.v3;

type Response = ResponseEnvelope;

interface StreamState {
  readonly call: grpc.ClientDuplexStream<Uint8Array, Response>;
  readonly seen: Set<string>;
  /** The last version received per type URL. */
  readonly versions: Map<string, string>;
  armed?: { readonly typeUrl: string; readonly version: string };
  reachedAt?: number;
  ended: boolean;
}

const now = (): number => performance.timeOrigin + performance.now();

const streams: StreamState[] = [];
const channels: grpc.Client[] = [];
let onReach: (() => void) | undefined;
let reached = 0;

/**
 * The HTTP/2 receive window of each client connection and stream. `perChannel` streams share a
 * connection, standing in for as many proxies with a connection each: with grpc-js's default
 * (64 KB for the whole connection) a push to its 100 streams (a new Service's CDS, ~10 KB each)
 * waited on about 16 WINDOW_UPDATEs from a busy client process. Envoy's own default windows are
 * 256 MiB (Http2ProtocolOptions); 16 MiB covers 100 streams' pushes.
 */
const FLOW_CONTROL_WINDOW = 16 << 20;

const serialize = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
// Only the envelope is read (./xds-envelope.ts): the resources are skipped undecoded.
const deserialize = (b: Buffer): Response => readResponseEnvelope(b);

function openStream(
  client: grpc.Client,
  index: number,
  services: number,
  wildcardClusters: boolean,
): Promise<StreamState> {
  const names = benchNames(0);
  const own = benchNames(1 + (index % Math.max(1, services - 1)));
  const subscribed: Record<XdsType, string[]> = {
    clusters: wildcardClusters ? [] : [...names.clusters, ...own.clusters],
    endpoints: [...names.endpoints, ...own.endpoints],
    listeners: [...names.listeners, ...own.listeners],
    routes: [...names.routes, ...own.routes],
  };
  const node = {
    id: `sidecar~10.3.${Math.floor(index / 250) % 250}.${(index % 250) + 1}~client-${index}.${BENCH_NAMESPACE}~${BENCH_NAMESPACE}.svc.cluster.local`,
    metadata: toStruct({ GENERATOR: 'grpc', NAMESPACE: BENCH_NAMESPACE }),
    locality: { zone: 'z1' },
  };
  const call = client.makeBidiStreamRequest(
    ADS_PATH,
    serialize,
    deserialize,
    new grpc.Metadata(),
    {},
  ) as grpc.ClientDuplexStream<Uint8Array, Response>;
  const st: StreamState = { call, seen: new Set(), versions: new Map(), ended: false };
  const send = (type: XdsType, version: string, nonce: string, withNode: boolean): void => {
    call.write(
      DiscoveryRequest.encode({
        version_info: version,
        resource_names: subscribed[type],
        type_url: XDS_TYPE_URL[type],
        response_nonce: nonce,
        ...(withNode ? { node } : {}),
      }).finish(),
    );
  };
  return new Promise<StreamState>((resolve, reject) => {
    call.on('data', (r: Response) => {
      const type = XDS_TYPES.find((t) => XDS_TYPE_URL[t] === r.type_url);
      if (!type) return;
      send(type, r.version_info, r.nonce, false); // ACK
      st.versions.set(r.type_url, r.version_info);
      const armed = st.armed;
      if (armed && armed.typeUrl === r.type_url && st.reachedAt === undefined && r.version_info !== armed.version) {
        st.reachedAt = now();
        reached++;
        onReach?.();
      }
      st.seen.add(r.type_url);
      if (st.seen.size === XDS_TYPES.length) resolve(st);
    });
    call.on('error', (e) => {
      st.ended = true;
      reject(e);
    });
    call.on('end', () => {
      st.ended = true;
    });
    XDS_TYPES.forEach((t, i) => send(t, '', '', i === 0));
  });
}

async function open(cmd: {
  port: number;
  streams: number;
  perChannel: number;
  firstIndex: number;
  services: number;
  wildcardClusters?: boolean;
}): Promise<{ ok: number; failed: number; error?: string }> {
  let ok = 0;
  let failed = 0;
  let error: string | undefined;
  const batch = 250; // streams opened at once: bounds the burst of initial pushes
  for (let start = 0; start < cmd.streams; start += batch) {
    const pending: Promise<void>[] = [];
    for (let i = start; i < Math.min(cmd.streams, start + batch); i++) {
      const index = cmd.firstIndex + i;
      if (i % cmd.perChannel === 0) {
        // A local subchannel pool: each Client gets its own HTTP/2 connection instead of sharing one.
        channels.push(
          new grpc.Client(`127.0.0.1:${cmd.port}`, grpc.credentials.createInsecure(), {
            'grpc.use_local_subchannel_pool': 1,
            'grpc.max_receive_message_length': 64 << 20,
            'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW,
          }),
        );
      }
      const client = channels[channels.length - 1]!;
      pending.push(
        withTimeout(openStream(client, index, cmd.services, cmd.wildcardClusters === true), 30_000).then(
          (st) => {
            streams.push(st);
            ok++;
          },
          (e: unknown) => {
            failed++;
            error ??= (e as Error).message;
          },
        ),
      );
    }
    await Promise.all(pending);
  }
  return { ok, failed, ...(error ? { error } : {}) };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no response on every type within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e as Error);
      },
    );
  });
}

function arm(type: XdsType = 'endpoints'): { armed: number } {
  reached = 0;
  const typeUrl = XDS_TYPE_URL[type];
  for (const st of streams) {
    st.armed = { typeUrl, version: st.versions.get(typeUrl) ?? '' };
    delete st.reachedAt;
  }
  return { armed: streams.length };
}

async function wait(
  timeoutMs: number,
  withTimes: boolean,
): Promise<{ reached: number; total: number; first?: number; last?: number; times?: number[] }> {
  const live = streams.filter((s) => !s.ended).length;
  if (reached < live) {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      onReach = () => {
        if (reached >= live) {
          clearTimeout(t);
          resolve();
        }
      };
    });
    onReach = undefined;
  }
  const times = streams.map((s) => s.reachedAt).filter((t): t is number => t !== undefined);
  return {
    reached: times.length,
    total: streams.length,
    ...(times.length ? { first: Math.min(...times), last: Math.max(...times) } : {}),
    ...(withTimes ? { times } : {}),
  };
}

for await (const line of createInterface({ input: process.stdin })) {
  const cmd = JSON.parse(line) as { op: string; [k: string]: unknown };
  let out: unknown;
  if (cmd.op === 'open') out = await open(cmd as unknown as Parameters<typeof open>[0]);
  else if (cmd.op === 'arm') out = arm((cmd.type as XdsType | undefined) ?? 'endpoints');
  else if (cmd.op === 'wait') out = await wait(Number(cmd.timeoutMs), cmd.times === true);
  else break;
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
for (const c of channels) c.close();
process.exit(0);
