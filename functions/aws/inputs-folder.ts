/** Reads a channel's inputs folder (every YAML/JSON object under a prefix) from S3, with limits. */
import { MeshsnapError } from '../../src/errors.js';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { isInputKey, type InputObject } from './input-files.js';

export interface FolderLimits {
  /** Default 10 000 objects. */
  readonly maxObjects?: number;
  /** Default 64 MiB in all: a Lambda holds the texts and the snapshot in memory at once. */
  readonly maxBytes?: number;
}

export class InputsTooLargeError extends MeshsnapError {
  override readonly name = 'InputsTooLargeError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('payload_too_large', message, options);
  }
}

export async function readInputsFolder(
  client: S3Client,
  bucket: string,
  folder: string,
  limits: FolderLimits = {},
): Promise<InputObject[]> {
  const maxObjects = limits.maxObjects ?? 10_000;
  const maxBytes = limits.maxBytes ?? 64 * 1024 * 1024;
  const keys: string[] = [];
  let token: string | undefined;
  let bytes = 0;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: folder, ...(token ? { ContinuationToken: token } : {}) }),
    );
    for (const o of page.Contents ?? []) {
      if (!o.Key || !isInputKey(o.Key)) continue;
      keys.push(o.Key);
      bytes += o.Size ?? 0;
    }
    if (keys.length > maxObjects) throw new InputsTooLargeError(`${folder}: more than ${maxObjects} input objects`);
    if (bytes > maxBytes) throw new InputsTooLargeError(`${folder}: more than ${maxBytes} bytes of inputs`);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  const out: InputObject[] = [];
  // One at a time: memory stays bounded, and a folder is rarely more than a few dozen objects.
  for (const key of keys.sort()) {
    try {
      const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      out.push({ name: key.slice(folder.length), text: res.Body ? await res.Body.transformToString('utf-8') : '' });
    } catch (e) {
      // Deleted between the listing and the read: the folder no longer has it.
      if ((e as { name?: string }).name === 'NoSuchKey') continue;
      throw e;
    }
  }
  return out;
}
