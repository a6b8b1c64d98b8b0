/**
 * Which rules a resource is held to. Envoy applies its protos' protoc-gen-validate rules to every
 * resource it loads (and NACKs one that breaks them); the proxyless gRPC xDS client does not (it
 * validates the fields it uses, gRFC A27/A28), and istiod relies on that: its proxyless listeners'
 * HttpConnectionManager has no `stat_prefix`, which Envoy requires (pilot/pkg/networking/grpcgen).
 * So a resource only proxyless classes load is held to Envoy's cross-field and RE2 rules (which
 * gRPC shares: weights, a terminal router, RE2 matchers) and not to `validate.rules`.
 */
import type { GroupId, ProxyClass } from '../compile/types.js';
import type { XdsType } from '../xds/type-urls.js';
import { validateResource, type Validator, type Violation } from '../xds/validate/index.js';

/** Groups that proxyless gRPC classes load and no Envoy class does. */
export function proxylessOnlyGroups(classes: readonly ProxyClass[]): Set<GroupId> {
  const grpc = new Set<GroupId>();
  const envoy = new Set<GroupId>();
  for (const cls of classes) for (const g of cls.groups) (cls.generator === 'grpc' ? grpc : envoy).add(g);
  for (const g of envoy) grpc.delete(g);
  return grpc;
}

/**
 * The rules `message` breaks; `proxyless`: only gRPC clients load it (see above); `shared`: one set
 * per check; `validator`: the process's unless given (a one-check validator: oneCheckValidator).
 */
export function envoyViolations(
  type: XdsType,
  message: object,
  proxyless: boolean,
  shared?: Set<object>,
  validator?: Validator,
): Violation[] {
  const violations = validateResource(type, message, shared, validator);
  return proxyless ? violations.filter((v) => v.rule.startsWith('envoy.')) : violations;
}
