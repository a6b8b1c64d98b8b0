/**
 * One line per push in the audit trail: a proxy ACKs each xDS type of a push separately, so the
 * ACKs of one proxy for one version (same relay, not separated by another event of that proxy)
 * are shown as one event listing the types. Pure.
 */
import type { TrailEvent } from './audit.js';

export type GroupedEvent = TrailEvent & { readonly typeUrls?: readonly string[] };

export function groupAcksPerPush(events: readonly TrailEvent[]): GroupedEvent[] {
  const out: { event: TrailEvent; typeUrls?: string[] }[] = [];
  const open = new Map<string, { event: TrailEvent; typeUrls?: string[] }>(); // node → its group still taking ACKs
  for (const e of events) {
    if (e.nodeId === undefined) {
      out.push({ event: e });
      continue;
    }
    const nodeKey = `${e.relay ?? ''}\u0000${e.nodeId}`;
    const group = open.get(nodeKey);
    if (
      e.kind === 'ack' &&
      group &&
      group.event.version === e.version &&
      e.typeUrl !== undefined &&
      !group.typeUrls?.includes(e.typeUrl)
    ) {
      group.typeUrls?.push(e.typeUrl);
      continue;
    }
    const entry = e.kind === 'ack' ? { event: e, typeUrls: e.typeUrl !== undefined ? [e.typeUrl] : [] } : { event: e };
    out.push(entry);
    if (e.kind === 'ack') open.set(nodeKey, entry);
    else open.delete(nodeKey);
  }
  return out.map(({ event, typeUrls }) => (typeUrls ? { ...event, typeUrls } : event));
}
