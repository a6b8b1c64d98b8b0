/**
 * Walks an Envoy message (typed `$Properties` objects as the compiler builds them, or protobufjs
 * messages decoded from an `Any`) against the protoc-gen-validate rule table and reports every
 * violated rule with its field path (proto field names; the contents of an `Any` continue the path
 * of the `Any` field, as in Envoy's config_dump).
 *
 * Each message type is turned, when first met, into a plan: one closure per field that has rules
 * or leads to a message that has some; the other fields are never read. Proto3 semantics: an
 * absent scalar is its default (rules apply to it, unless `ignore_empty`), a oneof member or an
 * absent message is checked only when set; `Any` contents are decoded by type URL and walked.
 */
import { LRUCache } from 'lru-cache';
import { codecOf, takePackedMessage, type MessageCodec } from '../proto.js';
import { typeNameOf } from '../type-urls.js';
import { WRAPPER_SCALARS } from '../wrappers.js';
import type { FieldEntry, FieldRules, MessageEntry, RuleTable } from './rule-table.js';
import { NUMBER_KINDS } from './rule-table.js';
import {
  boolCheck,
  bytesCheck,
  enumCheck,
  numberCheck,
  stringCheck,
  timeCheck,
  toNumber,
  type RuleProblem,
  type ValueCheck,
} from './scalar-rules.js';

/** One violated rule. */
export interface Violation {
  /** Field path inside the resource, e.g. `virtual_hosts[0].routes[2].route.cluster_header`. */
  readonly path: string;
  /** The rule, as written in the proto (`string.min_len`), or a cross-field rule's id (`envoy.…`). */
  readonly rule: string;
  readonly message: string;
  /** `filter_metadata.istio.config` of the innermost element on the path that has one. */
  readonly source?: string;
}

/** A path segment: a field name, a list index, or a map key. */
export type Segment = string | number | { readonly key: string };

/** The state of one walk: where it is, which Istio object it is under, what it found. */
export class Walk {
  readonly segs: Segment[] = [];
  readonly sources: string[] = [];
  readonly out: Violation[] = [];

  /** Sub-messages found clean in this walk: a strong set, dropped with the walk, cheap for the GC. */
  constructor(public clean: Set<object> = new Set()) {}

  /**
   * Makes a walk ready for the next resource (`clean` as the constructor's), its violations taken: a
   * validator walks each of the 121k resources of a 10k mesh with one; a new walk each time (four
   * objects, and the path's backing store grown again) allocated ~24 MB in the check at 10k.
   */
  restart(clean: Set<object> = new Set()): this {
    this.clean = clean;
    this.segs.length = 0;
    this.sources.length = 0;
    this.out.length = 0;
    return this;
  }

  report(p: RuleProblem, ...extra: Segment[]): void {
    const segs = extra.length ? [...this.segs, ...extra] : this.segs;
    const source = this.sources[this.sources.length - 1];
    this.out.push({ path: renderPath(segs), rule: p.rule, message: p.message, ...(source ? { source } : {}) });
  }
}

export function renderPath(segs: readonly Segment[]): string {
  let s = '';
  for (const seg of segs) {
    if (typeof seg === 'number') s += `[${seg}]`;
    else if (typeof seg === 'string') s += s ? `.${seg}` : seg;
    else s += `[${JSON.stringify(seg.key)}]`;
  }
  return s;
}

/** A check of one message type beyond its field rules (Envoy's cross-field rules, RE2); reports through `walk`. */
export type MessageHook = (message: Record<string, unknown>, walk: Walk) => void;

type Msg = Record<string, unknown>;
type FieldPlan = (message: Msg, walk: Walk) => void;
/** Checks one value at the walk's current path (the field, list item or map value). */
type ValuePlan = (value: unknown, walk: Walk) => void;

interface MessagePlan {
  readonly fields: readonly FieldPlan[];
  readonly oneofs: readonly (readonly [string, readonly string[]])[];
  /** Whether the message has a `metadata` (envoy.config.core.v3.Metadata) field to read provenance from. */
  readonly metadata: boolean;
  readonly hook: MessageHook | undefined;
  /**
   * Remember clean messages of this type across walks and builds: `always` (a type the compiler
   * shares by design), `frozen` (only its frozen messages, the ones the compiler shares), or never.
   */
  readonly shared: 'always' | 'frozen' | undefined;
  /**
   * Remember its clean frozen messages for good, whatever the type: the compiler freezes exactly
   * the parts it shares (interned, src/compile/intern.ts; an endpoint's parts, endpoints.ts), in one
   * output and across compiles (the intern tables are module-wide), and a frozen message cannot
   * change. Set for types with more than scalars to check (nested messages or a hook).
   */
  readonly frozen: boolean;
  /**
   * Remember clean messages of this type (it has message fields to walk)? Turned off for a type
   * whose messages turn out not to be shared: remembering would only cost.
   */
  nested: boolean;
  hits: number;
  misses: number;
}

/** After this many walked messages of a type, its clean cache stays only if it hit at least every 8th time. */
const CACHE_TRIAL = 2048;
/**
 * Lists of shared messages (a route config's virtual hosts) whose items were all found clean, kept
 * per owner name (the config's `name`) when this long: the next config of that name holds mostly
 * the same objects at the same positions (src/compile/routes.ts), so an identity comparison with
 * the kept list replaces a clean-set lookup per item. Every kept item is in the clean set for good.
 */
const MIN_CLEAN_LIST = 64;
/** Owner names kept per field (a mesh has one sidecar route config per HTTP port, plus gateways'). */
const MAX_CLEAN_LISTS = 64;

const ANY = 'google.protobuf.Any';
const METADATA = 'envoy.config.core.v3.Metadata';
const isNumberKind = (t: string): boolean => (NUMBER_KINDS as readonly string[]).includes(t);
const absent = (v: unknown): boolean => v === undefined || v === null;
const NO_ITEMS: readonly unknown[] = [];

/** The `istio.config` provenance of a Metadata value (a Struct, as built or as decoded). */
function istioConfigOf(metadata: unknown): string | undefined {
  const fm = (metadata as { filter_metadata?: Record<string, unknown> } | null | undefined)?.filter_metadata;
  const istio = fm?.istio as { fields?: Record<string, { stringValue?: unknown } | undefined> } | undefined;
  const config = istio?.fields?.config?.stringValue;
  return typeof config === 'string' && config ? config : undefined;
}

/** The scalar check of a rule body for a scalar (or wrapper) of type `scalar`. */
function scalarCheck(
  scalar: string,
  rules: FieldRules,
  enumValues?: Readonly<Record<string, number>>,
): ValueCheck | undefined {
  if (scalar === 'string') return rules.string ? stringCheck(rules.string) : undefined;
  if (scalar === 'bytes') return rules.bytes ? bytesCheck(rules.bytes) : undefined;
  if (scalar === 'bool') return rules.bool ? boolCheck(rules.bool) : undefined;
  if (scalar === 'enum') return rules.enum && enumValues ? enumCheck(rules.enum, enumValues) : undefined;
  if (isNumberKind(scalar)) {
    const body = rules[scalar as (typeof NUMBER_KINDS)[number]];
    return body ? numberCheck(scalar, body) : undefined;
  }
  return undefined;
}

const problemAt = (walk: Walk, check: ValueCheck, value: unknown): void => {
  const p = check(value);
  if (p) walk.report(p);
};

/** Whether a value check finds nothing wrong with an unset value. */
function passesUnset(value: ValuePlan): boolean {
  const probe = new Walk();
  value(undefined, probe);
  return probe.out.length === 0;
}

/** A set of message objects: weak for a process's validator, strong for one check's. */
interface MessageMemory {
  has(message: object): boolean;
  add(message: object): unknown;
}

export interface ValidatorOptions {
  /**
   * `process` (the default): what the validator remembers of the messages it walked (the clean
   * ones, the rejected ones) is weak, kept as long as the messages live, for later builds holding
   * them again (the watcher's). `check`: a validator for one check (the one-shot build), whose
   * memory dies with it: strong sets, which nothing outside the check holds, so the collections
   * after the check neither keep nor trace them (a weak table of every message of a 10k mesh stays
   * in the process's validator until its messages die, at the process's end). It does not remember
   * the resources themselves (see `rememberResources`).
   */
  readonly memory?: 'process' | 'check';
  /**
   * A validator whose findings this one trusts (the same rules): a resource or an `Any` it found
   * clean is not walked again. A one-shot build's check trusts the process's validator, which
   * checked the EnvoyFilter copies (and their packed configs) when the compile made them.
   */
  readonly trust?: Validator;
}

export class Validator {
  private readonly plans = new Map<string, MessagePlan | null>();
  /** Resources and `Any`s found clean: messages are immutable once built, so they are not walked again (by later builds too). */
  private readonly clean: MessageMemory;
  /**
   * Resources that break rules, with what they break, for the same reason. Not only compiler bugs:
   * a proxyless gRPC listener breaks Envoy-only rules it is not held to (envoy-acceptance.ts), and
   * would otherwise be walked again by every check.
   */
  private readonly rejected: {
    get(message: object): readonly Violation[] | undefined;
    set(message: object, violations: readonly Violation[]): unknown;
  };
  /**
   * Whether `validate` remembers the resources it walked. A one-check validator does not: the
   * resources of one output are distinct objects (one per group and name), so remembering them
   * costs a set entry each (121k at 10k services) and saves nothing; a resource met twice is
   * walked twice, unless frozen (the compiler's mark of a message it shares). Its sub-messages and
   * `Any`s are remembered as before.
   */
  private readonly rememberResources: boolean;
  /** The last resource's walk, its violations handed out: reused for the next (`Walk.restart`). */
  private idle: Walk | undefined;
  /** ValidatorOptions.trust */
  private readonly trust: Validator | undefined;

  /**
   * `sharedTypes`: message types the compiler shares between resources by design (a virtual host
   * in every client namespace's route config): their clean messages are remembered for good, like
   * resources, whatever the per-walk heuristic would decide (it sees the sharing too late: the
   * first namespace's config alone has thousands of virtual hosts, none seen before).
   */
  constructor(
    readonly table: RuleTable,
    private readonly hooks: Readonly<Record<string, MessageHook>> = {},
    private readonly sharedTypes: ReadonlySet<string> = new Set(),
    /**
     * Types of which the compiler shares some messages and marks them by freezing them (interned,
     * deep-frozen: src/compile/intern.ts): a listener's filter chains, listener filters, transport
     * sockets. Their clean frozen messages are remembered for good; the others are walked as usual.
     * A frozen message of any type with nested messages or a hook is remembered the same way; these
     * types also have their frozen items skipped before any call in a list.
     */
    private readonly frozenSharedTypes: ReadonlySet<string> = new Set(),
    opts: ValidatorOptions = {},
  ) {
    const once = opts.memory === 'check';
    this.clean = once ? new Set<object>() : new WeakSet<object>();
    this.rejected = once ? new Map<object, readonly Violation[]>() : new WeakMap<object, readonly Violation[]>();
    this.rememberResources = !once;
    this.trust = opts.trust;
  }

  /**
   * Every violated rule of `message`, a `typeName` (e.g. `envoy.config.cluster.v3.Cluster`).
   * `shared`: sub-messages already found clean, shared by the resources of one check.
   */
  validate(typeName: string, message: object, shared?: Set<object>): Violation[] {
    if (this.trust?.foundClean(message)) return [];
    // A frozen resource is one the compiler put in several groups (an EDS assignment in its locality groups).
    if (!this.rememberResources && !Object.isFrozen(message)) return this.walkResource(typeName, message, shared);
    if (this.clean.has(message)) return [];
    const known = this.rejected.get(message);
    if (known) return [...known];
    const found = this.walkResource(typeName, message, shared);
    if (found.length === 0) this.clean.add(message);
    else this.rejected.set(message, [...found]);
    return found;
  }

  private walkResource(typeName: string, message: object, shared: Set<object> | undefined): Violation[] {
    const walk = this.idle?.restart(shared) ?? new Walk(shared);
    this.idle = undefined; // a hook reentering the validator gets a walk of its own
    this.walkMessage(typeName, message as Msg, walk);
    // The violations are handed out in an array of their own (a proxyless listener has some).
    const found = walk.out.length === 0 ? [] : walk.out.splice(0);
    this.idle = walk;
    return found;
  }

  /** Whether this validator found `message` clean (and remembers it: a process validator's resources, frozen or shared messages). */
  foundClean(message: object): boolean {
    return this.clean.has(message);
  }

  /** Whether messages of this type are walked at all (they have rules, or lead to some). */
  knows(typeName: string): boolean {
    return this.table.messages[typeName] !== undefined || this.hooks[typeName] !== undefined;
  }

  walkMessage(typeName: string, message: Msg, walk: Walk): void {
    const plan = this.planOf(typeName);
    if (plan) this.walkPlan(plan, message, walk);
  }

  private walkPlan(plan: MessagePlan, message: Msg, walk: Walk): void {
    // Whether a message is valid depends on it alone, and the compiler shares sub-messages widely
    // (a route in many route configs): a clean one with nested messages is not walked again.
    const remember =
      plan.shared === 'always' || ((plan.frozen || plan.shared === 'frozen') && Object.isFrozen(message));
    if (remember) {
      if (this.clean.has(message)) return;
    } else if (plan.nested) {
      if (walk.clean.has(message)) {
        plan.hits++;
        return;
      }
      if (++plan.misses === CACHE_TRIAL && plan.hits < CACHE_TRIAL / 8) plan.nested = false;
    }
    const before = walk.out.length;
    const source = plan.metadata ? istioConfigOf(message.metadata) : undefined;
    if (source) walk.sources.push(source);
    const fields = plan.fields;
    for (let i = 0; i < fields.length; i++) (fields[i] as FieldPlan)(message, walk);
    for (let o = 0; o < plan.oneofs.length; o++) {
      const [oneof, members] = plan.oneofs[o] as readonly [string, readonly string[]];
      let set = false;
      for (const m of members) if (!absent(message[m])) set = true;
      if (!set) walk.report({ rule: 'oneof.required', message: `one of ${members.join(', ')} must be set` }, oneof);
    }
    plan.hook?.(message, walk);
    if (source) walk.sources.pop();
    if (walk.out.length === before) {
      if (remember) this.clean.add(message);
      else if (plan.nested) walk.clean.add(message);
    }
  }

  walkAny(any: Msg, walk: Walk): void {
    if (this.clean.has(any) || this.trust?.foundClean(any)) return;
    const typeName = typeNameOf(typeof any.type_url === 'string' ? any.type_url : '');
    if (!this.knows(typeName)) return;
    const codec = codecOf(typeName);
    if (!codec) return;
    const bytes = any.value instanceof Uint8Array ? any.value : new Uint8Array(0);
    let decoded = takePackedMessage(any) as Msg | undefined;
    if (decoded === undefined) decoded = this.decode(codec, typeName, bytes, walk);
    if (decoded === undefined) return;
    const before = walk.out.length;
    this.walkMessage(typeName, decoded, walk);
    if (walk.out.length === before) this.clean.add(any);
  }

  private decode(codec: MessageCodec<object>, typeName: string, bytes: Uint8Array, walk: Walk): Msg | undefined {
    try {
      return codec.decode(bytes) as Msg;
    } catch (e) {
      walk.report({
        rule: 'any.decode',
        message: `cannot be decoded as ${typeName}: ${e instanceof Error ? e.message : String(e)}`,
      });
      return undefined;
    }
  }

  private planOf(typeName: string): MessagePlan | null {
    let plan = this.plans.get(typeName);
    if (plan !== undefined) return plan;
    const entry: MessageEntry | undefined = this.table.messages[typeName];
    const hook = this.hooks[typeName];
    if (!entry && !hook) plan = null;
    else {
      // Set before the fields are planned: message types can nest themselves.
      const fields: FieldPlan[] = [];
      const nested =
        entry?.fields.some(
          (f) => f.type.includes('.') && f.type !== 'google.protobuf.Any' && !WRAPPER_SCALARS[f.type],
        ) ?? false;
      plan = {
        fields,
        oneofs: entry?.oneofs ?? [],
        metadata: entry?.fields.some((f) => f.name === 'metadata' && f.type === METADATA) ?? false,
        hook,
        shared: this.sharedTypes.has(typeName) ? 'always' : this.frozenSharedTypes.has(typeName) ? 'frozen' : undefined,
        frozen: nested || hook !== undefined,
        nested,
        hits: 0,
        misses: 0,
      };
      this.plans.set(typeName, plan);
      for (const f of entry?.fields ?? []) {
        const p = this.fieldPlan(f);
        if (p) fields.push(p);
      }
    }
    this.plans.set(typeName, plan);
    return plan;
  }

  private fieldPlan(f: FieldEntry): FieldPlan | undefined {
    const name = f.name;
    const rules = f.rules ?? {};
    if (f.map !== undefined) return this.mapPlan(f, rules);
    if (f.repeated) return this.repeatedPlan(f, rules);
    // The commonest planned field, a message walked when set, is walked straight from here (no value plan between).
    const sub = this.plainMessageType(f.type, rules);
    const value = sub !== undefined ? this.messageWalker(sub) : this.valuePlan(f.type, f.enum, rules, f.oneof === true);
    if (!value) return undefined;
    // Most fields are unset, and an unset one is usually fine (the default passes, or it is an
    // optional message): found out once here, so the walk skips them without a call.
    if (sub !== undefined || passesUnset(value)) {
      return (message, walk) => {
        const v = message[name];
        if (v === undefined || v === null) return;
        walk.segs.push(name);
        value(v, walk);
        walk.segs.pop();
      };
    }
    return (message, walk) => {
      walk.segs.push(name);
      value(message[name], walk);
      walk.segs.pop();
    };
  }

  /**
   * Walks a value (set) as a `type` message. The plan is looked up once, at the first message:
   * planning it now could recurse forever (message types nest themselves).
   */
  private messageWalker(type: string): ValuePlan {
    let plan: MessagePlan | null | undefined;
    return (v, walk) => {
      plan ??= this.planOf(type);
      if (plan) this.walkPlan(plan, v as Msg, walk);
    };
  }

  /**
   * `type` when a value of it under `rules` is only to be walked as a message when set: a message
   * type with rules (or a hook), not required, not skipped, not one of the kinds with rules of
   * their own (`Any`, Duration, Timestamp, wrappers). What valuePlan would check, without its layers.
   */
  private plainMessageType(type: string, rules: FieldRules): string | undefined {
    if (type === ANY || type === 'google.protobuf.Duration' || type === 'google.protobuf.Timestamp') return undefined;
    if (!type.includes('.') || WRAPPER_SCALARS[type]) return undefined;
    if (rules.message?.required === true || rules.message?.skip === true) return undefined;
    return this.table.messages[type] || this.hooks[type] ? type : undefined;
  }

  /**
   * The check of one value of type `type` under `rules`. `optional`: an unset value is skipped
   * (oneof members, list items and map values are always checked when they exist).
   */
  private valuePlan(
    type: string,
    enumName: string | undefined,
    rules: FieldRules,
    optional: boolean,
  ): ValuePlan | undefined {
    const sub = this.plainMessageType(type, rules);
    if (sub !== undefined) {
      const walkSub = this.messageWalker(sub);
      return (v, walk) => {
        if (!absent(v)) walkSub(v, walk);
      };
    }
    if (type === 'enum' || !type.includes('.')) {
      const check = scalarCheck(type, rules, enumName ? this.table.enums[enumName] : undefined);
      if (!check) return undefined;
      return optional
        ? (v, walk) => (absent(v) ? undefined : problemAt(walk, check, v))
        : (v, walk) => problemAt(walk, check, v);
    }
    const kind =
      type === ANY
        ? 'any'
        : type === 'google.protobuf.Duration'
          ? 'duration'
          : type === 'google.protobuf.Timestamp'
            ? 'timestamp'
            : 'message';
    const required =
      rules.message?.required === true ||
      (kind === 'any' && rules.any?.required === true) ||
      (kind === 'duration' && rules.duration?.required === true) ||
      (kind === 'timestamp' && rules.timestamp?.required === true);
    const requiredRule = rules.message?.required === true ? 'message.required' : `${kind}.required`;
    const checks: ValuePlan[] = [];
    const wrapped = WRAPPER_SCALARS[type];
    if (wrapped) {
      const check = scalarCheck(wrapped, rules);
      if (check) checks.push((v, walk) => problemAt(walk, check, (v as Msg).value));
    }
    if (kind === 'duration' || kind === 'timestamp') {
      const check = timeCheck(kind, (kind === 'duration' ? rules.duration : rules.timestamp) ?? {});
      if (check) checks.push((v, walk) => problemAt(walk, check, v));
    }
    if (kind === 'any') {
      const anyRules = rules.any ?? {};
      if (anyRules.in) {
        const set = new Set(anyRules.in);
        checks.push((v, walk) => {
          const url = (v as Msg).type_url;
          if (!set.has(url as string))
            walk.report({
              rule: 'any.in',
              message: `type URL ${JSON.stringify(url)} is not one of ${JSON.stringify([...set])}`,
            });
        });
      }
      if (anyRules.not_in) {
        const set = new Set(anyRules.not_in);
        checks.push((v, walk) => {
          const url = (v as Msg).type_url;
          if (set.has(url as string))
            walk.report({ rule: 'any.not_in', message: `type URL ${JSON.stringify(url)} is not allowed here` });
        });
      }
      checks.push((v, walk) => this.walkAny(v as Msg, walk));
    } else if (rules.message?.skip !== true && (this.table.messages[type] || this.hooks[type]))
      checks.push(this.messageWalker(type));
    // A oneof member's rules apply only when it is the member set (PGV), `required` included.
    const mustBeSet = required && !optional;
    if (!mustBeSet && checks.length === 0) return undefined;
    if (checks.length === 1) {
      const only = checks[0] as ValuePlan;
      return (v, walk) => {
        if (absent(v)) {
          if (mustBeSet) walk.report({ rule: requiredRule, message: 'is required' });
        } else only(v, walk);
      };
    }
    return (v, walk) => {
      if (absent(v)) {
        if (mustBeSet) walk.report({ rule: requiredRule, message: 'is required' });
        return;
      }
      for (const c of checks) c(v, walk);
    };
  }

  private repeatedPlan(f: FieldEntry, rules: FieldRules): FieldPlan | undefined {
    const name = f.name;
    const r = rules.repeated ?? {};
    const item = this.valuePlan(f.type, f.enum, r.items ?? {}, false);
    const min = r.min_items === undefined ? undefined : toNumber(r.min_items);
    const max = r.max_items === undefined ? undefined : toNumber(r.max_items);
    const unique = r.unique === true;
    const ignoreEmpty = r.ignore_empty === true;
    // Only frozen items of a frozen-shared type are ever in the clean set.
    const sharedItem = this.sharedTypes.has(f.type) || this.frozenSharedTypes.has(f.type);
    const bases = this.sharedTypes.has(f.type)
      ? new LRUCache<string, readonly unknown[]>({ max: MAX_CLEAN_LISTS })
      : undefined;
    if (!item && min === undefined && max === undefined && !unique) return undefined;
    return (message, walk) => {
      const list = (message[name] ?? NO_ITEMS) as readonly unknown[];
      // Most repeated fields are unset: no rule but a positive min_items reports on an empty list.
      if (list.length === 0 && (ignoreEmpty || !(min !== undefined && min > 0))) return;
      walk.segs.push(name);
      if (min !== undefined && list.length < min)
        walk.report({
          rule: 'repeated.min_items',
          message: `must have at least ${min} item${min === 1 ? '' : 's'}, has ${list.length}`,
        });
      if (max !== undefined && list.length > max)
        walk.report({
          rule: 'repeated.max_items',
          message: `must have at most ${max} item${max === 1 ? '' : 's'}, has ${list.length}`,
        });
      if (unique) {
        const seen = new Set<unknown>();
        for (let i = 0; i < list.length; i++) {
          const v = list[i];
          const key = typeof v === 'object' && v !== null ? String(toNumber(v)) : v;
          if (seen.has(key))
            walk.report({ rule: 'repeated.unique', message: `${JSON.stringify(key)} appears more than once` }, i);
          seen.add(key);
        }
      }
      if (item) {
        const owner = bases && typeof message.name === 'string' ? message.name : undefined;
        const basis = owner === undefined ? undefined : bases?.get(owner);
        const before = walk.out.length;
        for (let i = 0; i < list.length; i++) {
          const v = list[i];
          // A clean shared message (a virtual host in every namespace's route config) is skipped
          // here, before any call: found by position in the last clean list of the same owner (an
          // identity comparison), else in the clean set.
          if (sharedItem && ((basis !== undefined && basis[i] === v) || this.clean.has(v as object))) continue;
          walk.segs.push(i);
          item(v, walk);
          walk.segs.pop();
        }
        if (owner !== undefined && list.length >= MIN_CLEAN_LIST && walk.out.length === before) bases?.set(owner, list);
      }
      walk.segs.pop();
    };
  }

  private mapPlan(f: FieldEntry, rules: FieldRules): FieldPlan | undefined {
    const name = f.name;
    const r = rules.map ?? {};
    const value = this.valuePlan(f.type, f.enum, r.values ?? {}, false);
    const keyType = f.map as string;
    const keyCheck = r.keys ? scalarCheck(keyType, r.keys) : undefined;
    const numericKey = keyType !== 'string' && keyType !== 'bool';
    const min = r.min_pairs === undefined ? undefined : toNumber(r.min_pairs);
    const max = r.max_pairs === undefined ? undefined : toNumber(r.max_pairs);
    const noSparse = r.no_sparse === true;
    const ignoreEmpty = r.ignore_empty === true;
    if (!value && !keyCheck && min === undefined && max === undefined && !noSparse) return undefined;
    return (message, walk) => {
      const given = message[name] as Readonly<Record<string, unknown>> | null | undefined;
      // An unset map is empty: only a positive min_pairs reports on it.
      if ((given === undefined || given === null) && (ignoreEmpty || !(min !== undefined && min > 0))) return;
      const map = given ?? {};
      const keys = Object.keys(map);
      if (ignoreEmpty && keys.length === 0) return;
      walk.segs.push(name);
      if (min !== undefined && keys.length < min)
        walk.report({
          rule: 'map.min_pairs',
          message: `must have at least ${min} entr${min === 1 ? 'y' : 'ies'}, has ${keys.length}`,
        });
      if (max !== undefined && keys.length > max)
        walk.report({
          rule: 'map.max_pairs',
          message: `must have at most ${max} entr${max === 1 ? 'y' : 'ies'}, has ${keys.length}`,
        });
      for (const key of keys) {
        const v = map[key];
        walk.segs.push({ key });
        if (keyCheck) {
          const p = keyCheck(numericKey ? Number(key) : keyType === 'bool' ? key === 'true' : key);
          if (p) walk.report({ rule: `map.keys.${p.rule}`, message: `key ${JSON.stringify(key)}: ${p.message}` });
        }
        if (noSparse && absent(v)) walk.report({ rule: 'map.no_sparse', message: 'a map value must be set' });
        else if (value) value(v, walk);
        walk.segs.pop();
      }
      walk.segs.pop();
    };
  }
}
