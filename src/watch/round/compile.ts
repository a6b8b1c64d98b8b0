/** A round's compile, timed and counted in the metrics. */
import type { CompileRequest, CompileResult, SnapshotCompiler } from '../compiler.js';
import type { WatchMetrics } from '../metrics.js';

export async function compileTimed(
  compiler: SnapshotCompiler,
  request: CompileRequest,
  metrics: WatchMetrics,
): Promise<{ readonly result: CompileResult; readonly compileMs: number }> {
  const t0 = performance.now();
  let result: CompileResult;
  try {
    result = await compiler.compile(request);
  } catch (err) {
    metrics.compiles.inc({ mode: 'unknown', result: 'error' });
    throw err;
  }
  const compileMs = performance.now() - t0;
  metrics.compiles.inc({ mode: result.mode, result: 'ok' });
  metrics.compileSeconds.observe({ mode: result.mode }, compileMs / 1000);
  return { result, compileMs };
}
