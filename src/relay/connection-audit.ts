/**
 * Connects and disconnects as audit records (the AuditLog records ACKs and NACKs), so the API's
 * proxy status can say a proxy is gone and since when. A disconnect event carries no class: the
 * connect's is remembered per stream. The stream id rides in `detail.stream`, so a proxy that
 * reconnected before its old stream closed stays connected.
 */
import type { AuditRecord } from '../snapshot/audit.js';
import type { XdsEvent } from './types.js';

export function connectionAuditor(relay: string, channel: string): (e: XdsEvent) => AuditRecord | undefined {
  const classOfStream = new Map<string, string>();
  const record = (
    kind: 'connect' | 'disconnect',
    e: { streamId: string; nodeId: string; at: number },
    classId: string,
    detail: Record<string, unknown>,
  ): AuditRecord => ({
    at: new Date(e.at).toISOString(),
    kind,
    relay,
    channel,
    nodeId: e.nodeId,
    classId,
    typeUrl: '',
    version: '',
    snapshotVersion: 0,
    detail: { stream: e.streamId, ...detail },
  });
  return (e) => {
    if (e.kind === 'connect') {
      classOfStream.set(e.streamId, e.classId);
      return record('connect', e, e.classId, {
        protocol: e.protocol,
        ...(e.identity !== undefined ? { identity: e.identity } : {}),
      });
    }
    if (e.kind === 'disconnect') {
      const classId = classOfStream.get(e.streamId) ?? '';
      classOfStream.delete(e.streamId);
      return record('disconnect', e, classId, {});
    }
    return undefined;
  };
}
