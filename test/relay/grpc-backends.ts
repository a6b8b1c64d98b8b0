/**
 * Real gRPC backends for the end-to-end tests: grpc-js servers on 127.0.0.1 (port 0) serving
 * `echo.Echo/Hello`, each answering its identity ("v1", "v2"). Messages are JSON over a generic
 * service definition (the same path a .proto `service Echo { rpc Hello(Req) returns (Resp) }`
 * would give), so no proto loader is needed on either side.
 */
import * as grpc from '@grpc/grpc-js';

export interface HelloRequest {
  readonly id: string;
}
export interface HelloResponse {
  readonly backend: string;
  /** How many attempts of this request id the backend has seen, this one included. */
  readonly attempt: number;
}

const json = {
  serialize: (value: unknown): Buffer => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8')),
};

export const ECHO_SERVICE = {
  hello: {
    path: '/echo.Echo/Hello',
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize as (b: Buffer) => HelloRequest,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize as (b: Buffer) => HelloResponse,
  },
  /** A second method with the same messages and answer, for method matches. */
  bye: {
    path: '/echo.Echo/Bye',
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize as (b: Buffer) => HelloRequest,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize as (b: Buffer) => HelloResponse,
  },
} satisfies grpc.ServiceDefinition;

export const EchoClient = grpc.makeGenericClientConstructor(ECHO_SERVICE, 'echo.Echo');

export interface EchoBackend {
  readonly identity: string;
  readonly port: number;
  /** Calls answered (any outcome). */
  readonly calls: () => number;
  /** Attempts seen per request id. */
  readonly attempts: ReadonlyMap<string, number>;
  /** When true, the first attempt of every request id fails with UNAVAILABLE. */
  flaky: boolean;
  close(): Promise<void>;
}

export async function startEchoBackend(identity: string): Promise<EchoBackend> {
  const server = new grpc.Server();
  const attempts = new Map<string, number>();
  let calls = 0;
  const backend: EchoBackend = {
    identity,
    port: 0,
    calls: () => calls,
    attempts,
    flaky: false,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        // Do not let a stuck client hold the test open.
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000).unref();
      }),
  };
  const answer = (
    call: grpc.ServerUnaryCall<HelloRequest, HelloResponse>,
    callback: grpc.sendUnaryData<HelloResponse>,
  ): void => {
    calls++;
    const id = call.request.id;
    const n = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, n);
    if (backend.flaky && n === 1) {
      callback({ code: grpc.status.UNAVAILABLE, details: `${identity}: first attempt of ${id} fails` });
      return;
    }
    callback(null, { backend: identity, attempt: n });
  };
  server.addService(ECHO_SERVICE, { hello: answer, bye: answer });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  (backend as { port: number }).port = port;
  return backend;
}
