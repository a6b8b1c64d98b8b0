/** Option tables several commands share (importable without any command's implementation). */
import { storeOptions, type FlagSpec } from '../args.js';

/** The store, the channel and who acts (`--actor`). */
export const actorOptions = {
  ...storeOptions,
  actor: {
    type: 'string',
    value: 'WHO',
    help: 'who acts, for the audit log (default: $MESHSNAP_ACTOR, else the OS user)',
  },
} as const satisfies Record<string, FlagSpec>;

export const reasonOption = {
  reason: { type: 'string', value: 'TEXT', help: 'why, for the audit log' },
} as const satisfies Record<string, FlagSpec>;

/** `--reason` required, first in the usage line: the API requires a reason for these actions too. */
export const requiredReasonOption = { reason: { ...reasonOption.reason, required: true } } as const satisfies Record<
  string,
  FlagSpec
>;

export const historyOptions = { ...actorOptions, ...reasonOption } as const;

/** A proxy, for show and diff. */
export const nodeOptions = {
  node: {
    type: 'string',
    value: 'NODE_ID',
    help: 'the proxy’s node id, e.g. sidecar~10.244.1.10~web-v1-6c9f7d8b5-k2x7p.shop~shop.svc.cluster.local',
  },
  metadata: {
    type: 'string',
    value: 'JSON',
    help: 'its node metadata (NAMESPACE, LABELS, GENERATOR=grpc, NODE_NAME: its Kubernetes Node, whose locality picks the EDS variant); without LABELS a sidecar gets its namespace’s class sidecar/<ns>/_',
  },
} as const satisfies Record<string, FlagSpec>;

export const typeOption = {
  type: {
    type: 'string',
    value: 'clusters,endpoints,listeners,routes',
    help: 'only these xDS types (one or a comma list)',
  },
} as const satisfies Record<string, FlagSpec>;

/** `--force` of rollback and promote: serve a result that empties clusters of their endpoints. */
export const forceEmptyEndpointsOption = {
  force: {
    type: 'boolean',
    default: false,
    help: 'even when clusters that have endpoints in the target would be served none',
  },
} as const satisfies Record<string, FlagSpec>;
