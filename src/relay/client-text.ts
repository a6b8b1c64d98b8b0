/**
 * Text a proxy sent (node ids, NACK messages) on its way to logs and the audit: control
 * characters escaped, so a node id cannot move the cursor or forge a line on a terminal, and the
 * length bounded, saying by how much it was cut.
 */

// C0 controls, DEL, C1 controls, line/paragraph separators and bidi overrides/isolates.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Replaces every control character by its `\uXXXX` escape. */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** At most `max` characters; a cut text ends with a note giving the original length. */
export function clip(text: string, max: number): { readonly text: string; readonly truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  return { text: `${text.slice(0, max)}…[truncated by the relay: ${text.length} chars sent]`, truncated: true };
}

/** Client text for a log line: escaped and clipped (default 256 characters). */
export function forLog(text: string, max = 256): string {
  return escapeControls(clip(text, max).text);
}
