/**
 * Values a compile computes once and reads many times (a service's proxyless ports, the route
 * plans of every port): kept per CompileContext, and let go with it.
 */
import type { CompileContext } from './context.js';

/** `make(ctx)` on the first call for a context, the same value after. */
export function perCompile<T>(make: (ctx: CompileContext) => T): (ctx: CompileContext) => T {
  const values = new WeakMap<CompileContext, T>();
  return (ctx) => {
    let value = values.get(ctx);
    if (value === undefined) values.set(ctx, (value = make(ctx)));
    return value;
  };
}
