// Writes src/xds/gen/validate-checkers.js: one plain function per message type of the
// protoc-gen-validate rule table that answers one question, "is this message clean?", with the
// semantics of src/xds/validate/walker.ts (which stays the reference and the one that says what is
// wrong, with field paths). Why generated: the walker's per-field closures share their code, so each
// property load in them sees the messages of every type (megamorphic); a function per type reads
// constant field names from objects of a few shapes. Plain build-time code: workerd forbids eval
// and `new Function`. Rule bodies are checked by the walker's own scalar checks (the runtime's
// `scalar`, `time`), the cross-field rules by its hooks; what is shared between resources is
// remembered in the validator's sets, as the walker does (src/xds/validate/fast-check.ts).
import { readFileSync, writeFileSync } from 'node:fs';

const ANY = 'google.protobuf.Any';
const DURATION = 'google.protobuf.Duration';
const TIMESTAMP = 'google.protobuf.Timestamp';
/** src/xds/wrappers.ts's WRAPPER_SCALARS (a test compares them). */
export const WRAPPER_SCALARS = {
  'google.protobuf.DoubleValue': 'double',
  'google.protobuf.FloatValue': 'float',
  'google.protobuf.Int64Value': 'int64',
  'google.protobuf.UInt64Value': 'uint64',
  'google.protobuf.Int32Value': 'int32',
  'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.BoolValue': 'bool',
  'google.protobuf.StringValue': 'string',
  'google.protobuf.BytesValue': 'bytes',
};
/** The walker's MIN_CLEAN_LIST: a clean list of shared items this long is kept per owner name. */
const MIN_CLEAN_LIST = 64;

/** Reads the rule table from src/xds/gen/validate-rules.js (`export default {…};`). */
export function readRuleTable(rulesJs) {
  const text = readFileSync(rulesJs, 'utf8');
  return JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1));
}

const fnName = (type) => `t$${type.replaceAll('.', '$')}`;
const js = (v) => JSON.stringify(v);
const prop = (name) => (/^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${js(name)}]`);
/** Whether the walker plans a type: it has rules (every hooked type does: the runtime checks). */
const planned = (table, type) => table.messages[type] !== undefined;
const isMessageType = (type) => type.includes('.') && type !== ANY && !WRAPPER_SCALARS[type];

/** The walker's plainMessageType: a message walked only when set, straight from the field. */
function plainMessageType(table, type, rules) {
  if (type === ANY || type === DURATION || type === TIMESTAMP) return undefined;
  if (!type.includes('.') || WRAPPER_SCALARS[type]) return undefined;
  if (rules.message?.required === true || rules.message?.skip === true) return undefined;
  return planned(table, type) ? type : undefined;
}

/** Collects one type's constants (`consts`) and value helpers (`helpers`) while its fields are written. */
class TypeWriter {
  /** `index`: the type's position, the short prefix of its constants and helpers (`k12$…`). */
  constructor(table, type, index) {
    this.table = table;
    this.type = type;
    this.id = fnName(type);
    this.short = `k${index}`;
    this.consts = [];
    this.helpers = [];
    this.n = 0;
  }

  next(prefix) {
    return `${this.short}$${prefix}${this.n++}`;
  }

  /**
   * The name of a function `(v) => boolean` checking one value as the walker's valuePlan does
   * (`optional`: an absent value passes), or undefined when the walker has no plan for it.
   */
  value(type, enumName, rules, optional) {
    const sub = plainMessageType(this.table, type, rules);
    if (sub !== undefined) {
      const f = this.next('v');
      this.helpers.push(`  function ${f}(v) { return v === undefined || v === null || ${fnName(sub)}(v); }`);
      return f;
    }
    if (type === 'enum' || !type.includes('.')) {
      const check = this.scalar(type, rules, enumName);
      if (check === undefined) return undefined;
      const f = this.next('v');
      this.helpers.push(
        optional
          ? `  function ${f}(v) { return ${check} === undefined || v === undefined || v === null || ${check}(v) === undefined; }`
          : `  function ${f}(v) { return ${check} === undefined || ${check}(v) === undefined; }`,
      );
      return f;
    }
    const kind = type === ANY ? 'any' : type === DURATION ? 'duration' : type === TIMESTAMP ? 'timestamp' : 'message';
    const required =
      rules.message?.required === true ||
      (kind === 'any' && rules.any?.required === true) ||
      (kind === 'duration' && rules.duration?.required === true) ||
      (kind === 'timestamp' && rules.timestamp?.required === true);
    const checks = [];
    const wrapped = WRAPPER_SCALARS[type];
    if (wrapped) {
      const check = this.scalar(wrapped, rules);
      if (check !== undefined) checks.push(`(${check} === undefined || ${check}(v.value) === undefined)`);
    }
    if (kind === 'duration' || kind === 'timestamp') {
      const c = this.next('c');
      this.consts.push(
        `  const ${c} = rt.time(${js(kind)}, ${js((kind === 'duration' ? rules.duration : rules.timestamp) ?? {})});`,
      );
      checks.push(`(${c} === undefined || ${c}(v) === undefined)`);
    }
    if (kind === 'any') {
      const anyRules = rules.any ?? {};
      if (anyRules.in) {
        const s = this.next('s');
        this.consts.push(`  const ${s} = new Set(${js(anyRules.in)});`);
        checks.push(`${s}.has(v.type_url)`);
      }
      if (anyRules.not_in) {
        const s = this.next('s');
        this.consts.push(`  const ${s} = new Set(${js(anyRules.not_in)});`);
        checks.push(`!${s}.has(v.type_url)`);
      }
      checks.push('anyClean(v)');
    } else if (rules.message?.skip !== true && planned(this.table, type)) checks.push(`${fnName(type)}(v)`);
    const mustBeSet = required && !optional;
    if (!mustBeSet && checks.length === 0) return undefined;
    const f = this.next('v');
    this.helpers.push(
      `  function ${f}(v) { if (v === undefined || v === null) return ${!mustBeSet}; return ${checks.length ? checks.join(' && ') : 'true'}; }`,
    );
    return f;
  }

  /** A constant holding the walker's scalar check of `rules` (undefined at run time when the rules check nothing). */
  scalar(scalar, rules, enumName) {
    const kindRules = scalar === 'enum' ? rules.enum : rules[scalar];
    if (kindRules === undefined) return undefined;
    const c = this.next('c');
    this.consts.push(`  const ${c} = rt.scalar(${js(scalar)}, ${js(rules)}, ${js(enumName)});`);
    return c;
  }

  /** The statements checking one field of message `m`; each returns false on the first broken rule. */
  field(f) {
    const rules = f.rules ?? {};
    const at = `m${prop(f.name)}`;
    if (f.map !== undefined) return this.map(f, rules, at);
    if (f.repeated) return this.repeated(f, rules, at);
    const sub = plainMessageType(this.table, f.type, rules);
    if (sub !== undefined)
      return [`    if ((v = ${at}) !== undefined && v !== null && !${fnName(sub)}(v)) return false;`];
    const value = this.value(f.type, f.enum, rules, f.oneof === true);
    return value === undefined ? [] : [`    if (!${value}(${at})) return false;`];
  }

  repeated(f, rules, at) {
    const r = rules.repeated ?? {};
    const item = this.value(f.type, f.enum, r.items ?? {}, false);
    const min = r.min_items === undefined ? undefined : Number(r.min_items);
    const max = r.max_items === undefined ? undefined : Number(r.max_items);
    const unique = r.unique === true;
    const ignoreEmpty = r.ignore_empty === true;
    if (!item && min === undefined && max === undefined && !unique) return [];
    const out = [`    v = ${at} ?? NO_ITEMS;`];
    const skipEmpty = ignoreEmpty || !(min !== undefined && min > 0);
    out.push(`    if (${skipEmpty ? 'v.length !== 0' : 'true'}) {`);
    if (min !== undefined) out.push(`      if (v.length < ${min}) return false;`);
    if (max !== undefined) out.push(`      if (v.length > ${max}) return false;`);
    if (unique) out.push('      if (!unique(v)) return false;');
    if (item) {
      if (isMessageType(f.type)) {
        // Items of a type the compiler shares are skipped when clean (the walker's sharedItem, bases).
        const shared = this.next('s');
        const bases = this.next('b');
        this.consts.push(
          `  const ${shared} = rt.sharedItems(${js(f.type)});`,
          `  const ${bases} = rt.cleanLists(${js(f.type)});`,
        );
        out.push(
          `      const owner = ${bases} !== undefined && typeof m.name === 'string' ? m.name : undefined;`,
          `      const basis = owner === undefined ? undefined : ${bases}.get(owner);`,
          '      for (let i = 0; i < v.length; i++) {',
          '        const x = v[i];',
          `        if (${shared} && ((basis !== undefined && basis[i] === x) || clean.has(x))) continue;`,
          `        if (!${item}(x)) return false;`,
          '      }',
          `      if (owner !== undefined && v.length >= ${MIN_CLEAN_LIST}) ${bases}.set(owner, v);`,
        );
      } else out.push(`      for (let i = 0; i < v.length; i++) if (!${item}(v[i])) return false;`);
    }
    out.push('    }');
    return out;
  }

  map(f, rules, at) {
    const r = rules.map ?? {};
    const value = this.value(f.type, f.enum, r.values ?? {}, false);
    const keyType = f.map;
    const key = r.keys ? this.scalar(keyType, r.keys) : undefined;
    const min = r.min_pairs === undefined ? undefined : Number(r.min_pairs);
    const max = r.max_pairs === undefined ? undefined : Number(r.max_pairs);
    const noSparse = r.no_sparse === true;
    const ignoreEmpty = r.ignore_empty === true;
    if (!value && !key && min === undefined && max === undefined && !noSparse) return [];
    const keyValue =
      keyType !== 'string' && keyType !== 'bool' ? 'Number(k)' : keyType === 'bool' ? "k === 'true'" : 'k';
    const out = [`    v = ${at};`];
    const skipUnset = ignoreEmpty || !(min !== undefined && min > 0);
    out.push(`    if (${skipUnset ? 'v !== undefined && v !== null' : 'true'}) {`);
    out.push('      const map = v ?? {};', '      const keys = Object.keys(map);');
    out.push(`      if (${ignoreEmpty ? 'keys.length !== 0' : 'true'}) {`);
    if (min !== undefined) out.push(`        if (keys.length < ${min}) return false;`);
    if (max !== undefined) out.push(`        if (keys.length > ${max}) return false;`);
    out.push('        for (const k of keys) {', '          const x = map[k];');
    if (key) out.push(`          if (${key} !== undefined && ${key}(${keyValue}) !== undefined) return false;`);
    if (noSparse) out.push('          if (x === undefined || x === null) return false;');
    if (value) out.push(`          if (!${value}(x)) return false;`);
    out.push('        }', '      }', '    }');
    return out;
  }

  /** The type's function: the walker's walkPlan, answering only whether the message is clean. */
  write() {
    const entry = this.table.messages[this.type];
    const id = this.id;
    const k = this.short;
    const nested = entry.fields.some((f) => isMessageType(f.type));
    const body = entry.fields.flatMap((f) => this.field(f));
    for (const [, members] of entry.oneofs ?? [])
      body.push(
        `    if (${members.map((m) => `(m${prop(m)} === undefined || m${prop(m)} === null)`).join(' && ')}) return false;`,
      );
    this.consts.push(
      `  const ${k}$memo = rt.memo(${js(this.type)});`,
      `  const ${k}$hook = rt.hook(${js(this.type)});`,
      `  const ${k}$frozen = ${nested} || ${k}$hook !== undefined;`,
      `  let ${k}$nested = ${nested}, ${k}$hits = 0, ${k}$misses = 0;`,
    );
    return [
      `  // ${this.type}`,
      ...this.consts,
      ...this.helpers,
      `  function ${id}(m) {`,
      '    let remember = false;',
      `    if (${k}$memo === ALWAYS || ((${k}$frozen || ${k}$memo === FROZEN) && isFrozen(m))) {`,
      '      if (clean.has(m)) return true;',
      '      remember = true;',
      `    } else if (${k}$nested) {`,
      `      if (rt.walkClean.has(m)) { ${k}$hits++; return true; }`,
      `      if (++${k}$misses === TRIAL && ${k}$hits < TRIAL / 8) ${k}$nested = false;`,
      '    }',
      '    let v;',
      ...body,
      `    if (${k}$hook !== undefined && !hookClean(${k}$hook, m)) return false;`,
      '    if (remember) clean.add(m);',
      `    else if (${k}$nested) rt.walkClean.add(m);`,
      '    return true;',
      '  }',
    ];
  }
}

/** The module's source for `table` (a RuleTable): `export default function validateCheckers(rt)`. */
export function validateCheckersSource(table) {
  const types = Object.keys(table.messages).sort();
  const out = [
    '// Generated by scripts/gen-validate-checkers.mjs. Do not edit.',
    '// One function per message type with rules: true when the message breaks none (src/xds/validate/fast-check.ts).',
    '/* eslint-disable */',
    'export default function validateCheckers(rt) {',
    '  const { clean, isFrozen, hookClean, anyClean, unique, ALWAYS, FROZEN, TRIAL } = rt;',
    '  const NO_ITEMS = [];',
  ];
  types.forEach((type, i) => out.push(...new TypeWriter(table, type, i).write()));
  out.push('  return new Map([');
  for (const type of types) out.push(`    [${js(type)}, ${fnName(type)}],`);
  out.push('  ]);', '}', '');
  return out.join('\n');
}

export function writeValidateCheckers(rulesJs, outJs, outDts) {
  writeFileSync(outJs, validateCheckersSource(readRuleTable(rulesJs)));
  writeFileSync(
    outDts,
    '// Generated by scripts/gen-validate-checkers.mjs. Do not edit.\nimport type { CheckerRuntime, CleanChecker } from "../validate/fast-check.js";\nexport default function validateCheckers(rt: CheckerRuntime): ReadonlyMap<string, CleanChecker>;\n',
  );
}
