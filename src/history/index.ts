/** The history library: what the CLI (src/cli/commands) and the HTTP API (src/api) call. */
export { auditTrail, parseSince, recordEvent, type TrailEvent, type TrailQuery } from './audit.js';
export { readChannelState, updateChannelState, type ChannelState, type Pin } from './channel-state.js';
export { candidatesChannel, isCandidatesChannel, type HistoryContext } from './context.js';
export { diffVersions, formatVersionDiff, type VersionDiff } from './diff/index.js';
export { HistoryError, VersionNotFoundError } from './errors.js';
export { gc, type GcOptions, type GcResult } from './gc.js';
export { pin, unpin } from './pin.js';
export { pinnedRound, type PinnedRoundInput, type PinnedRoundResult } from './pinned-round.js';
export { promote } from './promote.js';
export { publishCompiled, type RecordFields } from './publish.js';
export { rollback, type RebuildResult } from './rollback.js';
export { InvalidSelectorError, selectVersion, versionLabel } from './select.js';
export { tag, untag } from './tag.js';
export { verifyVersion, type VerifyResult } from './verify.js';
