/**
 * `--compile-url URL`: compile in a remote function instead of in process (wire format:
 * remote-protocol.ts). The watcher keeps everything else — debounce, last known good, inputs
 * storage, publishing — so the snapshot is the same whichever side compiled it.
 */
import type { Hasher } from '../snapshot/digest.js';
import type { CompileRequest, CompileResult, SnapshotCompiler } from './compiler.js';
import {
  COMPILE_REQUEST_SCHEMA,
  readCompileResponse,
  RemoteCompileError,
  type CompileRequestBody,
} from './remote-protocol.js';

export interface RemoteCompilerOptions {
  readonly hasher?: Hasher;
  /** Per request (default 60 s). */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
  /** Sent as `Authorization: Bearer …` (the Worker's MESHSNAP_COMPILE_TOKEN). */
  readonly token?: string;
}

export class RemoteCompiler implements SnapshotCompiler {
  constructor(
    private readonly url: string,
    private readonly opts: RemoteCompilerOptions = {},
  ) {}

  async compile(req: CompileRequest): Promise<CompileResult> {
    const body: CompileRequestBody = { schema: COMPILE_REQUEST_SCHEMA, objects: req.objects.map((o) => o.object) };
    const doFetch = this.opts.fetch ?? fetch;
    const res = await doFetch(this.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(this.opts.token ? { authorization: `Bearer ${this.opts.token}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 60_000),
    });
    if (!res.ok)
      throw new RemoteCompileError(
        `compile at ${this.url} answered ${res.status}: ${(await res.text()).slice(0, 500)}`,
      );
    const { snapshot, diagnostics } = await readCompileResponse(await res.json(), this.opts.hasher);
    if (req.inputsDigest !== undefined && snapshot.inputsDigest !== req.inputsDigest) {
      throw new RemoteCompileError(
        `compile at ${this.url} compiled inputs ${snapshot.inputsDigest}, not the ${req.inputsDigest} it was sent`,
      );
    }
    return { snapshot, diagnostics, mode: 'remote' };
  }
}
