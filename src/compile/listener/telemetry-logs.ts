/**
 * Which access logs a proxy's listeners get, as istiod's Telemetries.AccessLogging
 * (pilot/pkg/model/telemetry.go, telemetry_logging.go) resolves them, for the Telemetries meshsnap
 * applies: the root namespace's namespace-wide one (mesh-wide), then the proxy namespace's own,
 * each the oldest without a selector or targetRef of its namespace, then every Telemetry of the
 * proxy's namespace that selects it, oldest first, each a level of its own (istiod's
 * applicableTelemetries). One selects a proxy by `selector.matchLabels`, or, with `targetRef(s)`,
 * when one names a Gateway API Gateway whose pods (`gateway.networking.k8s.io/gateway-name`) the
 * proxy is (ShouldAttachPolicy; other kinds attach to waypoints, which meshsnap does not serve).
 * Proxy classes are per label shape: each workload-selected Telemetry with access logging is a
 * class key `telemetry:<ns>/<name>` (`selecting`, `selectors`), and the loggers are resolved for
 * the keys a class holds.
 *
 * - Neither has `accessLogging` and the mesh names no `defaultProviders.accessLogging`: the mesh's
 *   `accessLogFile` (istiod's legacy path).
 * - Else the providers are merged as istiod's mergeLogs for the listener's mode (CLIENT: sidecar
 *   outbound and gateway listeners, SERVER: sidecar inbound): a level's entries that match the mode
 *   and name providers replace the providers in scope; an entry without providers takes the
 *   previous entry's; `disabled` turns a provider off, a later entry may turn it on again.
 * - Each provider is looked up among the mesh's extension providers (the built-in `prometheus`,
 *   `stackdriver`, `envoy` first, each replaced by a provider of that name; case-insensitively):
 *   an `envoyFileAccessLog` one gives its file logger (the built-in `envoy` without a format: the
 *   mesh's `accessLogEncoding` / `accessLogFormat` at /dev/stdout); providers of other kinds give
 *   none. If no provider is left, the mesh's `accessLogFile` again (istiod: no config, legacy).
 * - The loggers, sorted by provider name, go on every HCM and tcp_proxy and, with the NR filter,
 *   on virtualOutbound, virtualInbound and gateway listeners (access-log.ts).
 */
import { type Diagnostics, objectAt } from '../../model/diagnostics.js';
import type { ExtensionProvider } from '../../model/extension-provider.js';
import type { MeshConfig } from '../../model/mesh-config.js';
import { GATEWAY_NAME_LABEL } from '../../model/gateway-api.js';
import {
  isGatewayRef,
  type Telemetry,
  type TelemetryAccessLogging,
  type TelemetryLogMode,
} from '../../model/telemetry.js';
import { selects } from '../../proxy-class/class-id.js';
import {
  DEV_STDOUT,
  fileAccessLog,
  loggersFor,
  meshLoggers,
  providerFileAccessLog,
  type AccessLog,
  type Loggers,
} from './access-log.js';

export interface AccessLogIndex {
  /**
   * The loggers of a proxy of `namespace` (undefined: one without a Telemetry of its own) on `mode`
   * listeners, selected by the workload Telemetries of `workload` (their keys, `selecting`).
   */
  loggers(mode: TelemetryLogMode, namespace: string | undefined, workload?: readonly string[]): Loggers | undefined;
  /**
   * The providers whose logs those listeners get, by name (istiod's AccessLogging without the
   * disabled ones); undefined where istiod falls back to the mesh's `accessLogFile`.
   */
  providers(
    mode: TelemetryLogMode,
    namespace: string | undefined,
    workload?: readonly string[],
  ): readonly string[] | undefined;
  /**
   * Whether `namespace`'s own Telemetry sets access logging or tracing (its sidecars' outbound
   * listeners are then their own).
   */
  ownsListeners(namespace: string): boolean;
  /**
   * The Telemetries that apply to a proxy of `namespace` (undefined: the root namespace's alone)
   * selected by the workload Telemetries `workload`, in istiod's order (applicableTelemetries): the
   * root namespace's namespace-wide one, its namespace's, then the selecting ones, oldest first.
   */
  applicable(namespace: string | undefined, workload?: readonly string[]): readonly Telemetry[];
  /**
   * The keys (`telemetry:<ns>/<name>`, sorted) of the Telemetries with access logging or tracing
   * that select a proxy of `namespace` with these labels; empty when none does.
   */
  selecting(namespace: string, labels: Readonly<Record<string, string>>): readonly string[];
  /** Each workload-selected Telemetry with access logging or tracing: a label selector of its namespace per way it selects. */
  readonly selectors: readonly TelemetrySelector[];
}

export interface TelemetrySelector {
  readonly namespace: string;
  readonly selector: Readonly<Record<string, string>>;
  readonly key: string;
}

/** A workload-selected Telemetry's class key. */
export const telemetryKey = (t: Telemetry): string => `telemetry:${t.meta.namespace}/${t.meta.name}`;

const NO_KEYS: readonly string[] = [];
const NO_TELEMETRIES: readonly Telemetry[] = [];

/** A provider as istiod's mesh config holds it after ApplyMeshConfig. */
interface Provider {
  readonly name: string;
  /** The mesh's own extension provider; absent for a built-in one not replaced. */
  readonly given?: ExtensionProvider;
}

const BUILT_IN = ['prometheus', 'stackdriver', 'envoy'];
const BUILT_IN_FILE_PROVIDER = 'envoy';

/** istiod's list: the built-ins (each replaced by a provider of its name), then the others; a later duplicate replaces. */
function providerList(mesh: MeshConfig): readonly Provider[] {
  const given = new Map<string, ExtensionProvider>();
  for (const p of mesh.extensionProviders ?? []) given.set(p.name, p);
  const out: Provider[] = BUILT_IN.map((name) => {
    const p = given.get(name);
    return p ? { name, given: p } : { name };
  });
  for (const [name, p] of given) if (!BUILT_IN.includes(name)) out.push({ name, given: p });
  return out;
}

type Built = { readonly log: AccessLog } | { readonly unbuilt: string } | undefined;

/** A file logger at `path` in the mesh config's `accessLogEncoding` / `accessLogFormat`. */
const meshFormatLog = (mesh: MeshConfig, path: string): AccessLog =>
  fileAccessLog({ ...(mesh.accessLog ?? mesh.accessLogFormatting ?? { encoding: 'TEXT' }), path });

/** istiod's telemetryAccessLog: the logger a provider gives (none for providers of other kinds). */
function providerLog(mesh: MeshConfig, p: Provider): Built {
  if (!p.given) return p.name === BUILT_IN_FILE_PROVIDER ? { log: meshFormatLog(mesh, DEV_STDOUT) } : undefined;
  const file = p.given.envoyFileAccessLog;
  if (file) {
    // The built-in provider's name without a format of its own: the mesh config's format.
    if (p.name === BUILT_IN_FILE_PROVIDER && !file.logFormat && !file.omitEmptyValues)
      return { log: meshFormatLog(mesh, file.path || DEV_STDOUT) };
    return { log: providerFileAccessLog(file) };
  }
  if (p.given.unbuiltAccessLog) return { unbuilt: p.given.unbuiltAccessLog };
  return undefined;
}

const matchesMode = (e: TelemetryAccessLogging, mode: TelemetryLogMode): boolean =>
  e.mode === undefined || e.mode === mode;

/** istiod's mergeLogs: provider name → disabled. */
export function mergeLogs(
  levels: readonly (readonly TelemetryAccessLogging[])[],
  defaults: readonly string[],
  mode: TelemetryLogMode,
): Map<string, boolean> {
  const providers = new Map<string, boolean>();
  if (levels.length === 0) {
    for (const d of defaults) providers.set(d, false);
    return providers;
  }
  let names: readonly string[] = defaults;
  for (const level of levels) {
    const here = new Set<string>();
    for (const e of level) if (matchesMode(e, mode)) for (const p of e.providers ?? []) here.add(p);
    if (here.size > 0) names = [...here];
  }
  const inScope = new Set(names);
  let parent: readonly string[] = defaults;
  for (const level of levels)
    for (const e of level) {
      const own = e.providers?.length ? e.providers : parent;
      parent = own;
      for (const p of own) {
        if (!inScope.has(p) || !matchesMode(e, mode)) continue;
        providers.set(p, e.disabled === true);
      }
    }
  return providers;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** istiod's order of a namespace's Telemetries (sortConfigByCreationTime: creationTimestamp, then name). */
const oldestFirst = (telemetries: readonly Telemetry[]): Telemetry[] =>
  [...telemetries].sort(
    (a, b) => cmp(a.creationTimestamp ?? '', b.creationTimestamp ?? '') || cmp(a.meta.name, b.meta.name),
  );

/** The namespace-wide Telemetry istiod applies per namespace: the oldest. */
function namespaceWide(sorted: readonly Telemetry[]): Map<string, Telemetry> {
  const out = new Map<string, Telemetry>();
  for (const t of sorted) if (!t.selects && !out.has(t.meta.namespace)) out.set(t.meta.namespace, t);
  return out;
}

/**
 * The label selectors by which a workload-selected Telemetry picks proxies of its namespace
 * (istiod's ShouldAttachPolicy): its matchLabels; with targetRef(s), the gateway-name label of each
 * Gateway API Gateway named (other kinds attach to no sidecar or gateway pod).
 */
function workloadSelectors(t: Telemetry): Readonly<Record<string, string>>[] {
  if (t.targetRefs?.length) {
    const names = new Set(t.targetRefs.filter(isGatewayRef).map((r) => r.name));
    return [...names].sort().map((name) => ({ [GATEWAY_NAME_LABEL]: name }));
  }
  return t.matchLabels ? [t.matchLabels] : [];
}

const where = (t: Telemetry) => objectAt('Telemetry', t);

/** The index of one compile, with its diagnostics (shadowed Telemetries, providers not found or not built). */
export function indexAccessLogs(
  mesh: MeshConfig,
  telemetries: readonly Telemetry[],
  diags: Diagnostics,
): AccessLogIndex {
  const defaults = mesh.defaultAccessLogProviders ?? [];
  const legacy = meshLoggers(mesh.accessLog);
  if (telemetries.length === 0 && defaults.length === 0)
    return {
      loggers: () => legacy,
      providers: () => undefined,
      ownsListeners: () => false,
      applicable: () => NO_TELEMETRIES,
      selecting: () => NO_KEYS,
      selectors: [],
    };

  const sorted = oldestFirst(telemetries);
  const byNamespace = namespaceWide(sorted);
  // Workload-selected Telemetries with access logging or tracing, oldest first (istiod adds an access
  // log level only for those with access logging: a level without entries changes no merge).
  const workload = new Map<string, Telemetry>();
  const rank = new Map<string, number>();
  const selectors: TelemetrySelector[] = [];
  for (const t of sorted) {
    if (!t.selects || !(t.accessLogging?.length || t.tracing?.length)) continue;
    const key = telemetryKey(t);
    const own = workloadSelectors(t);
    if (own.length === 0) continue;
    rank.set(key, workload.size);
    workload.set(key, t);
    for (const selector of own) selectors.push({ namespace: t.meta.namespace, selector, key });
  }
  selectors.sort((a, b) => cmp(a.key, b.key) || cmp(JSON.stringify(a.selector), JSON.stringify(b.selector)));
  for (const t of telemetries)
    if (!t.selects && byNamespace.get(t.meta.namespace) !== t)
      diags.warn({
        ...where(t),
        code: 'conflicting-telemetry',
        field: 'spec',
        message: `namespace ${t.meta.namespace} has several Telemetries without a selector or targetRef; istiod applies only the oldest (${byNamespace.get(t.meta.namespace)?.meta.name})`,
      });

  const providers = providerList(mesh);
  const fetch = (name: string): Provider | undefined => {
    const folded = name.toLowerCase();
    return providers.find((p) => p.name.toLowerCase() === folded);
  };
  const built = new Map<Provider, Built>();
  const logOf = (p: Provider): Built => {
    if (!built.has(p)) built.set(p, providerLog(mesh, p));
    return built.get(p);
  };
  const report = (name: string, at: Record<string, unknown> & { field: string }): void => {
    const p = fetch(name);
    if (!p)
      diags.warn({
        ...at,
        code: 'unknown-provider',
        message: `access log provider "${name.slice(0, 80)}" is not an extension provider of the mesh config; istiod skips it`,
      });
    else {
      const b = logOf(p);
      if (b && 'unbuilt' in b)
        diags.warn({
          ...at,
          code: 'unsupported-provider',
          message: `access log provider "${p.name}" (${b.unbuilt}) is not built by meshsnap: its proxies send no such access log`,
        });
    }
  };
  defaults.forEach((d, i) => report(d, { field: `defaultProviders.accessLogging[${i}]` }));
  for (const t of [...byNamespace.values(), ...workload.values()])
    t.accessLogging?.forEach((e, i) =>
      e.providers?.forEach((name, j) =>
        report(name, { ...where(t), field: `spec.accessLogging[${i}].providers[${j}]` }),
      ),
    );

  const rootTelemetry = byNamespace.get(mesh.rootNamespace);
  const root = rootTelemetry?.accessLogging;
  const ownTelemetry = (ns: string | undefined) =>
    ns === undefined || ns === mesh.rootNamespace ? undefined : byNamespace.get(ns);
  const own = (ns: string | undefined) => ownTelemetry(ns)?.accessLogging;
  /** The selecting keys among `keys`, oldest Telemetry first (istiod's order of workload levels). */
  const selectedOf = (keys: readonly string[]): string[] =>
    keys.filter((k) => workload.has(k)).sort((a, b) => (rank.get(a) as number) - (rank.get(b) as number));
  interface Resolved {
    readonly names?: readonly string[];
    readonly loggers: Loggers | undefined;
  }
  const memo = new Map<string, Resolved>();
  const resolve = (mode: TelemetryLogMode, namespace: string | undefined, keys: readonly string[]): Resolved => {
    const nsLogging = own(namespace);
    // istiod's order: the oldest workload-selected Telemetry first, each a level.
    const selected = selectedOf(keys);
    const key = `${mode}/${nsLogging ? (namespace as string) : ''}/${selected.join(',')}`;
    let out = memo.get(key);
    if (out) return out;
    out = { loggers: legacy };
    const levels = [
      ...(root ? [root] : []),
      ...(nsLogging ? [nsLogging] : []),
      ...selected.flatMap((k) => {
        const logging = workload.get(k)?.accessLogging;
        return logging?.length ? [logging] : [];
      }),
    ];
    if (levels.length > 0 || defaults.length > 0) {
      const cfgs: { name: string; disabled: boolean; log?: AccessLog }[] = [];
      for (const [name, disabled] of mergeLogs(levels, defaults, mode)) {
        const p = fetch(name);
        const b = p && logOf(p);
        if (!p || !b) continue;
        cfgs.push({ name: p.name, disabled, ...('log' in b ? { log: b.log } : {}) });
      }
      cfgs.sort((a, b) => cmp(a.name, b.name));
      const enabled = cfgs.filter((c) => !c.disabled);
      // No provider left: istiod has no Telemetry config, and falls back to accessLogFile.
      if (cfgs.length > 0)
        out = {
          names: enabled.map((c) => c.name),
          loggers: loggersFor(enabled.flatMap((c) => (c.log ? [c.log] : []))),
        };
    }
    memo.set(key, out);
    return out;
  };
  return {
    ownsListeners: (ns) => {
      const t = ownTelemetry(ns);
      return t?.accessLogging !== undefined || t?.tracing !== undefined;
    },
    applicable: (namespace, keys = NO_KEYS) => {
      const nsTelemetry = ownTelemetry(namespace);
      return [
        ...(rootTelemetry ? [rootTelemetry] : []),
        ...(nsTelemetry ? [nsTelemetry] : []),
        ...selectedOf(keys).map((k) => workload.get(k) as Telemetry),
      ];
    },
    loggers: (mode, namespace, keys = NO_KEYS) => resolve(mode, namespace, keys).loggers,
    providers: (mode, namespace, keys = NO_KEYS) => resolve(mode, namespace, keys).names,
    selecting: (namespace, labels) => {
      if (selectors.length === 0) return NO_KEYS;
      const keys = new Set<string>();
      for (const s of selectors) if (s.namespace === namespace && selects(s.selector, labels)) keys.add(s.key);
      return keys.size ? [...keys].sort() : NO_KEYS;
    },
    selectors,
  };
}
