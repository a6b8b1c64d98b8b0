/**
 * The wire format of `meshsnap watch --compile-url URL`: the watcher POSTs its inputs to a remote
 * compile function (a Worker or a Lambda, a later issue) and gets the snapshot back. Pure (no
 * node:*), so the server side can run in workerd.
 *
 * Request, `POST URL`, `content-type: application/json`:
 *
 *     { "schema": "meshsnap.compile-request/v1",
 *       "objects": [ <canonical Kubernetes/Istio object>, ... ] }   // sorted by Kind/namespace/name
 *
 * The objects are the stored inputs (src/snapshot/stored-inputs/): exactly what a local compile
 * reads, so both give the same snapshot, whose inputs digest is the root of their stored inputs
 * tree (the watcher checks it against its own).
 *
 * Response, `200`, `content-type: application/json`:
 *
 *     { "schema": "meshsnap.compile-response/v1",
 *       "digest": "sha256:…",                       // the snapshot's digest (its top document's)
 *       "documents": [ { "digest": "sha256:…", "layer": n, "text": "<canonical JSON>" }, ... ],
 *                                                   // the snapshot tree, children first, top last
 *       "objects": { "sha256:…": "<base64 protobuf bytes>", ... },
 *       "diagnostics": [ <Diagnostic>, ... ] }
 *
 * The client trusts nothing: it re-digests every document and object, refuses a mismatch, and
 * reads the tree back from the documents it got (src/snapshot/content.ts).
 * Any other status is an error; its body (text) is the message.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import type { RawDocument } from '../inputs/parse.js';
import { compileDocuments } from '../pipeline.js';
import { snapshotCounts, type BuiltSnapshot, type TreeDocument } from '../snapshot/build.js';
import { readSnapshotContent } from '../snapshot/content.js';
import { digestOf, utf8Bytes, type Hasher } from '../snapshot/digest.js';

export const COMPILE_REQUEST_SCHEMA = 'meshsnap.compile-request/v1';
export const COMPILE_RESPONSE_SCHEMA = 'meshsnap.compile-response/v1';

type Raw = Readonly<Record<string, unknown>>;

export interface CompileRequestBody {
  readonly schema: typeof COMPILE_REQUEST_SCHEMA;
  readonly objects: readonly Raw[];
}

export interface CompileResponseBody {
  readonly schema: typeof COMPILE_RESPONSE_SCHEMA;
  readonly digest: string;
  readonly documents: readonly { readonly digest: string; readonly layer: number; readonly text: string }[];
  readonly objects: Readonly<Record<string, string>>;
  readonly diagnostics: readonly Diagnostic[];
}

export class RemoteCompileError extends Error {
  override readonly name = 'RemoteCompileError';
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function fromBase64(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Server side: a request body → the response body. Throws RemoteCompileError on a malformed request. */
export function serveCompileRequest(body: unknown, hasher?: Hasher): CompileResponseBody {
  if (!isRecord(body) || body.schema !== COMPILE_REQUEST_SCHEMA || !Array.isArray(body.objects)) {
    throw new RemoteCompileError(`not a ${COMPILE_REQUEST_SCHEMA} request`);
  }
  const docs: RawDocument[] = body.objects
    .filter(isRecord)
    .map((object, index) => ({ file: 'request', index, object }));
  const result = compileDocuments(docs, hasher ? { hasher } : {});
  const objects: Record<string, string> = {};
  for (const [digest, bytes] of result.snapshot.objects) objects[digest] = toBase64(bytes);
  const decoder = new TextDecoder();
  const documents = result.snapshot.documents.map((d) => ({
    digest: d.digest,
    layer: d.layer,
    text: decoder.decode(d.bytes),
  }));
  return {
    schema: COMPILE_RESPONSE_SCHEMA,
    digest: result.snapshot.digest,
    documents,
    objects,
    diagnostics: result.diagnostics,
  };
}

/** Client side: checks a response body and turns it into a snapshot. */
export async function readCompileResponse(
  body: unknown,
  hasher?: Hasher,
): Promise<{ snapshot: BuiltSnapshot; diagnostics: Diagnostic[] }> {
  if (
    !isRecord(body) ||
    body.schema !== COMPILE_RESPONSE_SCHEMA ||
    typeof body.digest !== 'string' ||
    !isRecord(body.objects) ||
    !Array.isArray(body.documents)
  ) {
    throw new RemoteCompileError(`not a ${COMPILE_RESPONSE_SCHEMA} response`);
  }
  const documents: TreeDocument[] = [];
  const byDigest = new Map<string, Uint8Array>();
  for (const d of body.documents) {
    if (!isRecord(d) || typeof d.digest !== 'string' || typeof d.text !== 'string' || typeof d.layer !== 'number')
      throw new RemoteCompileError('malformed document entry');
    const bytes = utf8Bytes(d.text);
    const got = digestOf(bytes, hasher);
    if (got !== d.digest) throw new RemoteCompileError(`document ${d.digest} hashes to ${got}`);
    documents.push({ digest: got, layer: d.layer, bytes });
    byDigest.set(got, bytes);
  }
  const content = await readSnapshotContent(async (d) => byDigest.get(d) ?? null, body.digest);
  if (!content) throw new RemoteCompileError(`the response has no top document ${body.digest}`);
  const objects = new Map<string, Uint8Array>();
  for (const digest of Object.keys(body.objects).sort()) {
    const text = body.objects[digest];
    if (typeof text !== 'string') throw new RemoteCompileError(`object ${digest} is not base64 text`);
    const bytes = fromBase64(text);
    const got = digestOf(bytes, hasher);
    if (got !== digest) throw new RemoteCompileError(`object ${digest} hashes to ${got}`);
    objects.set(digest, bytes);
  }
  const diagnostics = Array.isArray(body.diagnostics)
    ? (body.diagnostics.filter(isRecord) as unknown as Diagnostic[])
    : [];
  const snapshot: BuiltSnapshot = {
    digest: body.digest,
    inputsDigest: content.inputsDigest,
    compiler: content.compiler,
    content,
    counts: snapshotCounts(content),
    objects,
    documents,
  };
  return { snapshot, diagnostics };
}
