/**
 * Response bytes built from the resource bytes encoded at compile time; no resource is re-encoded
 * per stream.
 *
 * SotW: a DiscoveryResponse body (version_info, resources, type_url) is encoded once per
 * class + type + version + subscription and shared by every stream of that class; each stream only
 * appends its nonce. Protobuf allows this: fields may appear in any order and a parser reads them
 * all, so `prefix ‖ field 5 (nonce)` is a complete DiscoveryResponse
 * (https://protobuf.dev/programming-guides/encoding/#order).
 *
 * Delta: each resource's `Resource` entry (name, version = digest, Any) is encoded once and cached;
 * a DeltaDiscoveryResponse is the concatenation of those entries and a few small fields.
 */
import { createHash } from 'node:crypto';
import protobuf from 'protobufjs/minimal.js';
import { encodeMessage } from '../../xds/proto.js';
import { lengthDelimited } from '../../xds/wire/splice.js';
import type { ServedResource } from '../types.js';
import { allocFrame, FRAME_HEADER_BYTES, messageOf, type Frame } from './grpc-frames.js';
import { MSG } from './services.js';

const RESOURCE = 'envoy.service.discovery.v3.Resource';

const stringField = (field: number, s: string): Uint8Array =>
  protobuf.Writer.create()
    .uint32((field << 3) | 2)
    .string(s)
    .finish();

/** DiscoveryResponse.nonce and DeltaDiscoveryResponse.nonce are both field 5 (string). */
export const NONCE_FIELD = 5;

/**
 * The gRPC frame of the cached body plus a nonce, in one buffer written in place (every stream of a
 * switch gets one, or shares one: no encoder per stream). Nonces are short; a long one goes through
 * the encoder.
 */
export function framedWithNonce(prefix: Uint8Array, nonce: string): Frame {
  const n = Buffer.byteLength(nonce);
  if (n > 127) return frameParts([prefix, stringField(NONCE_FIELD, nonce)]);
  const out = allocFrame(prefix.byteLength + 2 + n);
  let at = FRAME_HEADER_BYTES;
  out.set(prefix, at);
  at += prefix.byteLength;
  out[at] = (NONCE_FIELD << 3) | 2; // tag: field 5, length-delimited
  out[at + 1] = n; // a one-byte varint length
  out.write(nonce, at + 2, 'utf8');
  return out;
}

/** The cached body plus a nonce: the message of framedWithNonce. */
export const withNonce = (prefix: Uint8Array, nonce: string): Buffer => messageOf(framedWithNonce(prefix, nonce));

/** One frame of a message made of parts, copied once. */
function frameParts(parts: readonly Uint8Array[]): Frame {
  let length = 0;
  for (const p of parts) length += p.byteLength;
  const out = allocFrame(length);
  let at = FRAME_HEADER_BYTES;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** A SotW response body without nonce, encoded once and reused by all streams of a class. */
export interface SotwBody {
  readonly prefix: Uint8Array;
  readonly version: string;
  /** Changes iff the served (name, digest) set changes: "did anything change for this proxy". */
  readonly contentKey: string;
  readonly count: number;
}

export function encodeSotwBody(
  typeUrl: string,
  version: string,
  resources: readonly ServedResource[],
  contentKey: string,
): SotwBody {
  return { prefix: encodeBody(typeUrl, version, resources), version, contentKey, count: resources.length };
}

/**
 * A body whose bytes are encoded on first use. A switch asks every stream's body for its content
 * key, and most named subscriptions (EDS, RDS) are unchanged by it: their bodies are compared,
 * never sent, so they are never encoded.
 */
export function lazySotwBody(
  typeUrl: string,
  version: string,
  resources: readonly ServedResource[],
  contentKey: string,
): SotwBody {
  let prefix: Uint8Array | undefined;
  return {
    get prefix() {
      return (prefix ??= encodeBody(typeUrl, version, resources));
    },
    version,
    contentKey,
    count: resources.length,
  };
}

const encodeBody = (typeUrl: string, version: string, resources: readonly ServedResource[]): Uint8Array =>
  encodeMessage(MSG.Response, {
    version_info: version,
    type_url: typeUrl,
    resources: resources.map((r) => ({ type_url: typeUrl, value: r.bytes })),
  });

/** A short digest of the served (name, digest) pairs; names must be sorted by the caller. */
export function contentKeyOf(resources: readonly ServedResource[]): string {
  const h = createHash('sha256');
  for (const r of resources) h.update(`${r.name}\0${r.digest}\n`);
  return h.digest('base64url').slice(0, 22);
}

/** Encoded `DeltaDiscoveryResponse.resources` entries (field 2), one per resource object. */
const deltaEntries = new WeakMap<ServedResource, Uint8Array>();

function deltaEntry(typeUrl: string, r: ServedResource): Uint8Array {
  let entry = deltaEntries.get(r);
  if (!entry) {
    // Per-resource version = the resource digest (the object's content address).
    const resource = encodeMessage(RESOURCE, {
      name: r.name,
      version: r.digest,
      resource: { type_url: typeUrl, value: r.bytes },
    });
    entry = lengthDelimited(2, resource);
    deltaEntries.set(r, entry);
  }
  return entry;
}

/** The gRPC frame of a DeltaDiscoveryResponse. */
export function encodeDeltaFrame(
  systemVersion: string,
  typeUrl: string,
  resources: readonly ServedResource[],
  removed: readonly string[],
  nonce: string,
): Frame {
  const parts: Uint8Array[] = [stringField(1, systemVersion)];
  for (const r of resources) parts.push(deltaEntry(typeUrl, r));
  parts.push(stringField(4, typeUrl));
  parts.push(stringField(NONCE_FIELD, nonce));
  for (const name of removed) parts.push(stringField(6, name));
  return frameParts(parts);
}
