/**
 * Would Envoy accept this resource? The protoc-gen-validate rules of Envoy's own protos (generated
 * at build time into src/xds/gen/validate-rules.js by scripts/gen-validate-rules.mjs) plus Envoy's
 * cross-field and RE2 rules (envoy-rules.ts). Pure: no Node built-ins, so it runs in workerd too.
 */
import rules from '../gen/validate-rules.js';
import { XDS_TYPE_NAME, type XdsType } from '../type-urls.js';
import { ENVOY_RULES } from './envoy-rules.js';
import { Validator, type Violation } from './walker.js';

export type { RuleTable } from './rule-table.js';
export { ENVOY_RULES } from './envoy-rules.js';
export { forgetDomainBases } from './domains-unique.js';
export { Validator, type MessageHook, type ValidatorOptions, type Violation } from './walker.js';

let processValidator: Validator | undefined;

/** Sub-messages the compiler shares between resources by design (src/compile/routes.ts), remembered once clean. */
const SHARED_TYPES: ReadonlySet<string> = new Set(['envoy.config.route.v3.VirtualHost']);

/** Sub-messages the compiler shares when it freezes them (src/compile/intern.ts), remembered once clean. */
const FROZEN_SHARED_TYPES: ReadonlySet<string> = new Set([
  'envoy.config.listener.v3.FilterChain',
  'envoy.config.listener.v3.ListenerFilter',
  'envoy.config.core.v3.TransportSocket',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter',
]);

/** The validator of Envoy's rules (one per process: it remembers the messages it found clean). */
export function envoyValidator(): Validator {
  return (processValidator ??= new Validator(rules, ENVOY_RULES, SHARED_TYPES, FROZEN_SHARED_TYPES));
}

/**
 * A validator of Envoy's rules for one check (an output checked once: the one-shot build): what it
 * remembers dies with it (ValidatorOptions.memory). It trusts what the process's validator found
 * clean (ValidatorOptions.trust: the EnvoyFilter copies the compile checked are not walked again).
 */
export function oneCheckValidator(): Validator {
  return new Validator(rules, ENVOY_RULES, SHARED_TYPES, FROZEN_SHARED_TYPES, {
    memory: 'check',
    ...(processValidator ? { trust: processValidator } : {}),
  });
}

/** Every rule an xDS resource breaks; [] when Envoy would accept it. `shared`: one set for the resources of one check. */
export function validateResource(
  type: XdsType,
  message: object,
  shared?: Set<object>,
  validator: Validator = envoyValidator(),
): Violation[] {
  return validator.validate(XDS_TYPE_NAME[type], message, shared);
}

/**
 * The Istio object behind a violation, as `Kind namespace/name`, from the `istio.config`
 * provenance path (`/apis/networking.istio.io/v1/namespaces/<ns>/<kind>/<name>`).
 */
export function istioObjectOf(
  configPath: string | undefined,
): { kind: string; namespace: string; name: string } | undefined {
  const m = /^\/apis\/[^/]+\/[^/]+\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(configPath ?? '');
  if (!m) return undefined;
  const kind = (m[2] as string)
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
  return { kind, namespace: m[1] as string, name: m[3] as string };
}
