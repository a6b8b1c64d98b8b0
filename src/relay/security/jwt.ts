/** A compact JWS split into its parts, without verifying anything. */
export interface DecodedJwt {
  readonly header: Readonly<Record<string, unknown>>;
  readonly payload: Readonly<Record<string, unknown>>;
  /** `<header>.<payload>` as sent: what the signature covers. */
  readonly signingInput: string;
  readonly signature: Buffer;
}

export function decodeJwt(token: string): DecodedJwt | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [h, p, s] = parts as [string, string, string];
  try {
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as unknown;
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as unknown;
    if (!isRecord(header) || !isRecord(payload)) return undefined;
    return { header, payload, signingInput: `${h}.${p}`, signature: Buffer.from(s, 'base64url') };
  } catch {
    return undefined;
  }
}

/** `exp` in ms since the epoch, when the token has one. */
export function expiryMs(payload: Readonly<Record<string, unknown>>): number | undefined {
  return typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
