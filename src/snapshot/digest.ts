/**
 * Content digests: `sha256:<hex>` of bytes.
 *
 * The default hasher is @noble/hashes (pure JS, so it runs in workerd). Node edges may inject a
 * faster `node:crypto` hasher; both must give the same hex for the same bytes.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

/** Hashes bytes with SHA-256 and returns lowercase hex. */
export type Hasher = (bytes: Uint8Array) => string;

export const DIGEST_PREFIX = 'sha256:';

/** A lowercase hex digit's value (a character code), else -1. */
export const hexValue = (c: number): number =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;

export const nobleSha256Hex: Hasher = (bytes) => bytesToHex(sha256(bytes));

/** `sha256:<hex>` of the bytes. */
export function digestOf(bytes: Uint8Array, hasher: Hasher = nobleSha256Hex): string {
  return DIGEST_PREFIX + hasher(bytes);
}

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

export const isDigest = (value: unknown): value is string => typeof value === 'string' && DIGEST_RE.test(value);

/** The hex part of a digest, or undefined when it is not a well-formed `sha256:<hex>`. */
export function digestHex(digest: string): string | undefined {
  return isDigest(digest) ? digest.slice(DIGEST_PREFIX.length) : undefined;
}

const utf8 = new TextEncoder();
export const utf8Bytes = (text: string): Uint8Array => utf8.encode(text);
