/**
 * Frames written straight to grpc-js's HTTP/2 stream reach a grpc-js client as the very messages
 * (one frame shared by several calls, an empty one, one larger than an HTTP/2 DATA frame), with
 * grpc-js's size limit still enforced; a call of another shape falls back to grpc-js's own write.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { FRAME_HEADER_BYTES, frameOf, frameWriter, messageOf, type Frame } from '../../src/relay/xds/grpc-frames.js';
import { encodeSotwBody, framedWithNonce, withNonce } from '../../src/relay/xds/responses.js';

const identity = (b: Buffer): Buffer => b;
const METHOD: grpc.MethodDefinition<Buffer, Buffer> = {
  path: '/test.Frames/Bidi',
  requestStream: true,
  responseStream: true,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
};

interface Served {
  readonly port: number;
  readonly server: grpc.Server;
  /** Each call's frame writer, in arrival order. */
  readonly writers: ReturnType<typeof frameWriter>[];
  readonly calls: grpc.ServerDuplexStream<Buffer, Buffer>[];
}

async function serve(options: grpc.ServerOptions = {}): Promise<Served> {
  const server = new grpc.Server(options);
  const writers: ReturnType<typeof frameWriter>[] = [];
  const calls: grpc.ServerDuplexStream<Buffer, Buffer>[] = [];
  server.addService({ Bidi: METHOD } as grpc.ServiceDefinition, {
    Bidi: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      calls.push(call);
      writers.push(frameWriter(call as unknown as grpc.ServerDuplexStream<object, object | Uint8Array>));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return { port, server, writers, calls };
}

/** A client call that collects what it receives and how it ended. */
function open(client: grpc.Client): { messages: Buffer[]; status: Promise<grpc.StatusObject> } {
  const call = client.makeBidiStreamRequest(METHOD.path, identity, identity);
  const messages: Buffer[] = [];
  call.on('data', (m: Buffer) => messages.push(m));
  const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  call.on('error', () => {});
  call.write(Buffer.from('hi'));
  return { messages, status };
}

const writeAll = (w: ReturnType<typeof frameWriter>, frames: readonly Frame[]): Promise<void> =>
  frames.reduce<Promise<void>>(
    (prev, f) => prev.then(() => new Promise<void>((res, rej) => w.write(f, (e) => (e ? rej(e) : res())))),
    Promise.resolve(),
  );

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), 'condition not reached within 5 s');
}

let s: Served;
let client: grpc.Client;
before(async () => {
  s = await serve();
  client = new grpc.Client(`127.0.0.1:${s.port}`, grpc.credentials.createInsecure());
});
after(() => {
  client.close();
  s.server.forceShutdown();
});

test(
  'one shared frame, an empty one and a 100 KB one reach every call as the messages',
  { timeout: 10_000 },
  async () => {
    const a = open(client);
    const b = open(client);
    await until(() => s.writers.length === 2);
    const shared = frameOf(Buffer.from('the same response for every stream'));
    const big = frameOf(Buffer.alloc(100_000, 7));
    const empty = frameOf(Buffer.alloc(0));
    for (const w of s.writers) assert.equal(w.direct, true, 'grpc-js 1.14 has the shape: frames go to HTTP/2 directly');
    await Promise.all(s.writers.map((w) => writeAll(w, [shared, empty, big])));
    await until(() => a.messages.length === 3 && b.messages.length === 3);
    for (const got of [a.messages, b.messages])
      assert.deepEqual(
        got.map((m) => Buffer.from(m)),
        [messageOf(shared), Buffer.alloc(0), messageOf(big)],
      );
    for (const c of s.calls) c.end();
    assert.equal((await a.status).code, grpc.status.OK, 'the status still follows the frames');
    s.writers.length = 0;
    s.calls.length = 0;
  },
);

test(
  'over grpc.max_send_message_length: the call ends with RESOURCE_EXHAUSTED, as grpc-js does',
  { timeout: 10_000 },
  async () => {
    const small = await serve({ 'grpc.max_send_message_length': 16 });
    const c = new grpc.Client(`127.0.0.1:${small.port}`, grpc.credentials.createInsecure());
    try {
      const call = open(c);
      await until(() => small.writers.length === 1);
      small.writers[0]!.write(frameOf(Buffer.alloc(17)), () => {});
      assert.equal((await call.status).code, grpc.status.RESOURCE_EXHAUSTED);
      assert.deepEqual(call.messages, []);
    } finally {
      c.close();
      small.server.forceShutdown();
    }
  },
);

test('a call of another shape gets the message through its own write', () => {
  const written: unknown[] = [];
  const fake = {
    write: (chunk: unknown, cb: (err?: Error | null) => void): boolean => {
      written.push(chunk);
      cb();
      return true;
    },
  };
  const w = frameWriter(fake as unknown as grpc.ServerDuplexStream<object, object | Uint8Array>);
  assert.equal(w.direct, false);
  let done = false;
  w.write(frameOf(Buffer.from('abc')), () => (done = true));
  assert.deepEqual(written, [Buffer.from('abc')]);
  assert.ok(done);
});

test('framedWithNonce: a gRPC header with the message length, then exactly withNonce, short or long nonce', () => {
  const body = encodeSotwBody('type.googleapis.com/envoy.config.cluster.v3.Cluster', 'v1', [], 'k');
  for (const nonce of ['1', 'n'.repeat(127), 'ñ'.repeat(100)]) {
    const frame = framedWithNonce(body.prefix, nonce);
    assert.equal(frame[0], 0, 'not compressed');
    assert.equal(frame.readUInt32BE(1), frame.byteLength - FRAME_HEADER_BYTES);
    assert.deepEqual(messageOf(frame), withNonce(body.prefix, nonce));
  }
});
