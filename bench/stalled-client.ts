/**
 * Hostile xDS clients for tests and the benchmark: raw HTTP/2 connections that announce a flow
 * control window of 0 (`initialWindowSize: 0`), open an ADS stream, send one gRPC-framed
 * DiscoveryRequest (wildcard CDS) and never read a byte of the answer. Each client is its own
 * connection, as an attacker would open them.
 */
import { connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { envoy, toStruct, type JsonValue } from '../src/xds/proto.js';
import { XDS_TYPE_URL } from '../src/xds/type-urls.js';

export const ADS_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

export interface StalledClient {
  readonly session: ClientHttp2Session;
  readonly stream: ClientHttp2Stream;
  /** Resolves when the relay ends the stream (reset, trailers or connection closed). */
  readonly ended: Promise<void>;
  close(): void;
}

/** One gRPC message frame: compressed flag 0, big-endian length, the message. */
export function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

export function discoveryRequestFrame(
  node: { readonly id: string; readonly metadata: Readonly<Record<string, JsonValue>> },
  typeUrl = XDS_TYPE_URL.clusters,
): Buffer {
  const req = envoy.service.discovery.v3.DiscoveryRequest.fromObject({
    node: { id: node.id, metadata: toStruct(node.metadata) },
    type_url: typeUrl,
  });
  return grpcFrame(envoy.service.discovery.v3.DiscoveryRequest.encode(req).finish());
}

export function openStalledClient(
  port: number,
  node: { readonly id: string; readonly metadata: Readonly<Record<string, JsonValue>> },
): StalledClient {
  const session = connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 0 } });
  session.on('error', () => {});
  const stream = session.request({
    ':method': 'POST',
    ':path': ADS_PATH,
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  stream.on('error', () => {});
  stream.write(discoveryRequestFrame(node));
  const ended = new Promise<void>((resolve) => {
    stream.once('close', () => resolve());
    session.once('close', () => resolve());
  });
  return {
    session,
    stream,
    ended,
    close: () => {
      stream.close();
      session.destroy();
    },
  };
}
