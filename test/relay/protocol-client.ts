/**
 * A protocol-level xDS test client: raw bidi streams on @grpc/grpc-js with the same static codecs,
 * so tests see exactly the messages a proxy sees (nonces, versions, removed names).
 */
import * as grpc from '@grpc/grpc-js';
import { decodeMessage, encodeMessage } from '../../src/xds/proto.js';
import { MSG, ADS_SERVICE } from '../../src/relay/xds/services.js';
import { XdsServer, type XdsServerOptions } from '../../src/relay/xds/server.js';
import type { XdsEvent } from '../../src/relay/types.js';

export interface Resp {
  version_info: string;
  system_version_info: string;
  type_url: string;
  nonce: string;
  resources: {
    type_url?: string;
    value?: Uint8Array;
    name?: string;
    version?: string;
    resource?: { type_url: string; value: Uint8Array };
  }[];
  removed_resources: string[];
}

export const NODE = {
  productpage: {
    id: 'sidecar~10.244.0.16~productpage-v1-5f6d7c8b9-abcde.default~default.svc.cluster.local',
    metadata: {
      fields: {
        NAMESPACE: { stringValue: 'default' },
        LABELS: { structValue: { fields: { app: { stringValue: 'productpage' }, version: { stringValue: 'v1' } } } },
      },
    },
  },
  grpc: {
    id: 'sidecar~10.244.0.99~client.default~default.svc.cluster.local',
    metadata: { fields: { NAMESPACE: { stringValue: 'default' }, GENERATOR: { stringValue: 'grpc' } } },
  },
  unknownNs: {
    id: 'sidecar~10.0.0.1~x.nowhere~nowhere.svc.cluster.local',
    metadata: { fields: { NAMESPACE: { stringValue: 'nowhere' } } },
  },
  malformed: { id: 'not-a-node-id', metadata: { fields: {} } },
};

export class TestStream {
  private readonly responses: Resp[] = [];
  private waiter: (() => void) | undefined;
  readonly status: Promise<grpc.StatusObject>;
  private readonly call: grpc.ClientDuplexStream<object, object>;

  constructor(
    client: grpc.Client,
    path: string,
    readonly delta: boolean,
  ) {
    const req = delta ? MSG.DeltaRequest : MSG.Request;
    const res = delta ? MSG.DeltaResponse : MSG.Response;
    this.call = client.makeBidiStreamRequest(
      path,
      (v: object) => Buffer.from(encodeMessage(req, v)),
      (b: Buffer) => decodeMessage(res, b),
    );
    this.call.on('data', (r: Resp) => {
      this.responses.push(r);
      this.waiter?.();
    });
    this.status = new Promise((resolve) => this.call.on('status', resolve));
    this.call.on('error', () => {});
  }

  send(req: Record<string, unknown>): void {
    this.call.write(req);
  }

  /** The next response, or a rejection after `ms`. */
  async next(ms = 3000): Promise<Resp> {
    const deadline = Date.now() + ms;
    while (this.responses.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no response in time');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.waiter = undefined;
    }
    return this.responses.shift() as Resp;
  }

  /** Asserts that no response arrives within `ms`. */
  async none(ms = 250): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    if (this.responses.length)
      throw new Error(`unexpected response: ${JSON.stringify(summary(this.responses[0] as Resp))}`);
  }

  close(): void {
    this.call.end();
    this.call.cancel();
  }
}

export const summary = (r: Resp) => ({
  type: r.type_url,
  version: r.version_info || r.system_version_info,
  n: r.resources.length,
  removed: r.removed_resources,
});

/** Names in a response (SotW: decoded from each Any's name field 1; delta: Resource.name). */
export function names(r: Resp, delta = false): string[] {
  if (delta) return r.resources.map((x) => x.name ?? '');
  return r.resources.map((x) => {
    const typeName = (x.type_url ?? '').split('/').pop() ?? '';
    return String(
      (decodeMessage(typeName, x.value ?? new Uint8Array()) as { name?: string; cluster_name?: string }).name ||
        (decodeMessage(typeName, x.value ?? new Uint8Array()) as { cluster_name?: string }).cluster_name,
    );
  });
}

export interface Harness {
  readonly xds: XdsServer;
  readonly server: grpc.Server;
  readonly client: grpc.Client;
  readonly events: XdsEvent[];
  open(method?: string, service?: string, delta?: boolean): TestStream;
  close(): Promise<void>;
}

export async function startHarness(options: XdsServerOptions = {}): Promise<Harness> {
  const events: XdsEvent[] = [];
  const xds = new XdsServer({ ...options, onEvent: (e) => events.push(e) });
  const server = new grpc.Server();
  xds.addTo(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const streams: TestStream[] = [];
  return {
    xds,
    server,
    client,
    events,
    open(method = 'StreamAggregatedResources', service = ADS_SERVICE, delta = method.startsWith('Delta')) {
      const s = new TestStream(client, `/${service}/${method}`, delta);
      streams.push(s);
      return s;
    },
    async close() {
      for (const s of streams) s.close();
      client.close();
      await xds.drain(500);
      server.forceShutdown();
    },
  };
}
