/**
 * Strings built by `+` or a template literal are ropes in V8 (a ConsString node per join, 32
 * bytes each, pointing at the parts) until something reads their characters; then V8 copies
 * them into one flat string, and the garbage collector drops the rope nodes.
 *
 * The compiler keeps hundreds of thousands of built names in its output (cluster names, SNIs,
 * virtual hosts, telemetry labels: ~230k ropes of ~680k nodes, 22 MB at 10k services), which
 * every scavenge copies and every full collection marks until the snapshot build encodes them,
 * flattening them then. `flat` reads one character of a string it is handed: V8 flattens it in
 * place, so the rope dies young, and the output holds one compact string. (A caller TurboFan has
 * optimized may drop the unused read and keep the rope, as a micro-test shows; in the compile it
 * left the same heap as a flattening that always holds, `normalize()`: docs/benchmarks-journal.md, fifth day.)
 */
export function flat(s: string): string {
  s.charCodeAt(0);
  return s;
}
