/**
 * The Envoy check's fast path: "is this resource clean?" answered by one generated function per
 * message type (scripts/gen-validate-checkers.mjs, src/xds/gen/validate-checkers.js) with the
 * walker's semantics (walker.ts), but no field paths, no provenance and no list of violations. The
 * walker's per-field closures share their code, so every property load in them sees messages of
 * every type; the generated functions read constant names from objects of a few shapes, which V8
 * does several times faster. Almost every resource is clean: the walker runs only for one that is
 * not, and says what is wrong with it, with paths (Validator.validate).
 *
 * Both remember the same things in the same sets (the validator's clean messages, the walk's
 * shared set, clean lists of shared items), so a message either found clean is skipped by both.
 */
import { LRUCache } from 'lru-cache';
import checkers from '../gen/validate-checkers.js';
import generatedRules from '../gen/validate-rules.js';
import { codecOf, packedMessageOf, takePackedMessage } from '../proto.js';
import { typeNameOf } from '../type-urls.js';
import type { RuleTable } from './rule-table.js';
import { scalarCheck, timeCheck, toNumber, type ValueCheck } from './scalar-rules.js';
import { Walk, type MessageHook } from './walk.js';

/** Answers whether a message of one type breaks no rule. */
export type CleanChecker = (message: object) => boolean;

/** How a type's clean messages are remembered (the walker's MessagePlan.shared). */
const ALWAYS = 1;
const FROZEN = 2;

/** What the generated functions use (their `rt`). */
export interface CheckerRuntime {
  readonly clean: { has(message: unknown): boolean; add(message: object): unknown };
  /** The current walk's set of clean sub-messages (the walker's Walk.clean). */
  walkClean: Set<object>;
  readonly isFrozen: (o: object) => boolean;
  readonly ALWAYS: number;
  readonly FROZEN: number;
  readonly TRIAL: number;
  memo(type: string): number;
  hook(type: string): MessageHook | undefined;
  hookClean(hook: MessageHook, message: object): boolean;
  anyClean(any: Record<string, unknown>): boolean;
  unique(list: readonly unknown[]): boolean;
  scalar(scalar: string, rules: object, enumName: string | undefined): ValueCheck | undefined;
  time(kind: 'duration' | 'timestamp', rules: object): ValueCheck | undefined;
  sharedItems(type: string): boolean;
  cleanLists(type: string): LRUCache<string, readonly unknown[]> | undefined;
}

/** Generated functions and the rule table they were generated from. */
export interface GeneratedCheckers {
  readonly table: RuleTable;
  readonly factory: (rt: CheckerRuntime) => ReadonlyMap<string, CleanChecker>;
}

/** The build's: scripts/gen-protos.mjs generates both from Envoy's protos. */
const GENERATED: GeneratedCheckers = { table: generatedRules, factory: checkers };

export interface FastCheckOptions {
  readonly table: RuleTable;
  readonly hooks: Readonly<Record<string, MessageHook>>;
  readonly sharedTypes: ReadonlySet<string>;
  readonly frozenSharedTypes: ReadonlySet<string>;
  /** The validator's memory of clean messages (shared with its walker). */
  readonly clean: { has(message: object): boolean; add(message: object): unknown };
  /** A validator whose clean messages are trusted (ValidatorOptions.trust). */
  readonly trusted?: (message: object) => boolean;
  /** The walker's constants, so both remember alike. */
  readonly cacheTrial: number;
  readonly maxCleanLists: number;
}

export class FastCheck {
  private readonly byType: ReadonlyMap<string, CleanChecker>;
  private readonly rt: CheckerRuntime;
  /** The hook's reports land here and are dropped: the fast path only asks whether there are any. */
  private readonly scratch = new Walk();

  /**
   * undefined for another rule table than the generated one (a test's), or when a hooked type has
   * no generated function: the walker then checks everything.
   */
  static create(opts: FastCheckOptions, generated: GeneratedCheckers = GENERATED): FastCheck | undefined {
    if (opts.table !== generated.table) return undefined;
    for (const type of Object.keys(opts.hooks)) if (opts.table.messages[type] === undefined) return undefined;
    return new FastCheck(opts, generated.factory);
  }

  private constructor(
    private readonly opts: FastCheckOptions,
    factory: GeneratedCheckers['factory'],
  ) {
    const { table, hooks, sharedTypes, frozenSharedTypes } = opts;
    const lists = new Map<string, LRUCache<string, readonly unknown[]>>();
    this.rt = {
      clean: opts.clean as CheckerRuntime['clean'],
      walkClean: new Set(),
      isFrozen: Object.isFrozen,
      ALWAYS,
      FROZEN,
      TRIAL: opts.cacheTrial,
      memo: (type) => (sharedTypes.has(type) ? ALWAYS : frozenSharedTypes.has(type) ? FROZEN : 0),
      hook: (type) => hooks[type],
      hookClean: (hook, message) => this.hookClean(hook, message),
      anyClean: (any) => this.anyClean(any),
      unique,
      scalar: (scalar, rules, enumName) =>
        scalarCheck(scalar, rules, enumName === undefined ? undefined : table.enums[enumName]),
      time: (kind, rules) => timeCheck(kind, rules),
      sharedItems: (type) => sharedTypes.has(type) || frozenSharedTypes.has(type),
      cleanLists: (type) => {
        if (!sharedTypes.has(type)) return undefined;
        let lru = lists.get(type);
        if (!lru) lists.set(type, (lru = new LRUCache({ max: opts.maxCleanLists })));
        return lru;
      },
    };
    this.byType = factory(this.rt);
  }

  /**
   * Whether `message`, a `typeName`, breaks no rule; `walkClean`: the walk's set of clean
   * sub-messages (shared by the resources of one check, as the walker's).
   */
  isClean(typeName: string, message: object, walkClean: Set<object>): boolean {
    const check = this.byType.get(typeName);
    if (!check) return this.opts.hooks[typeName] === undefined;
    this.rt.walkClean = walkClean;
    return check(message);
  }

  private hookClean(hook: MessageHook, message: object): boolean {
    const scratch = this.scratch;
    hook(message as Record<string, unknown>, scratch);
    if (scratch.out.length === 0) return true;
    scratch.restart();
    return false;
  }

  /** The walker's walkAny: the packed message (or the decoded bytes) checked as its type. */
  private anyClean(any: Record<string, unknown>): boolean {
    const { clean, trusted, table, hooks } = this.opts;
    if (clean.has(any) || trusted?.(any)) return true;
    const typeName = typeNameOf(typeof any.type_url === 'string' ? any.type_url : '');
    if (table.messages[typeName] === undefined && hooks[typeName] === undefined) return true;
    const codec = codecOf(typeName);
    if (!codec) return true;
    // Peeked, not taken: if the message is not clean, the walker takes it to say why.
    let decoded = packedMessageOf(any);
    const packed = decoded !== undefined;
    if (!packed) {
      try {
        decoded = codec.decode(any.value instanceof Uint8Array ? any.value : new Uint8Array(0));
      } catch {
        return false;
      }
    }
    const check = this.byType.get(typeName);
    if (!check || !check(decoded as object)) return false;
    if (packed) takePackedMessage(any);
    clean.add(any);
    return true;
  }
}

/** The walker's `repeated.unique`: no value twice (64-bit numbers compared by value). */
function unique(list: readonly unknown[]): boolean {
  const seen = new Set<unknown>();
  for (const v of list) {
    const key = typeof v === 'object' && v !== null ? String(toNumber(v)) : v;
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return true;
}
