// The allowed imports between the folders of src/ (and functions/, bench/): one direction only.
// eslint.config.js turns the table into one `no-restricted-imports` block per unit; README.md
// (Architecture) shows the same table. Import cycles between files: .dependency-cruiser.mjs.

/** Imported by every unit; they import nothing of the project. */
const LEAVES = ['version', 'canonical-json', 'errors', 'log', 'backoff', 'full-gc'];

/** What the edges that drive everything (the command line, the benchmarks) may import. */
const EVERY_LIBRARY_FOLDER = [
  'api',
  'watch',
  'relay',
  'history',
  'pipeline',
  'compile',
  'snapshot',
  'snapshot/store',
  'snapshot/stored-inputs',
  'inputs',
  'model',
  'xds',
  'proxy-class',
  'explain',
];

/** unit → the units it may import (besides itself and the leaves). */
export const ALLOWED = {
  version: [],
  'canonical-json': [],
  errors: [],
  log: [],
  backoff: [],
  'full-gc': [],
  xds: [],
  'proxy-class': [],
  explain: [],
  model: [],
  inputs: ['model', 'xds'],
  compile: ['model', 'xds', 'proxy-class'],
  snapshot: ['compile', 'model', 'xds', 'proxy-class'],
  'snapshot/store': ['snapshot', 'model', 'xds'],
  'snapshot/stored-inputs': ['snapshot', 'snapshot/store', 'inputs', 'model', 'xds'],
  relay: ['snapshot', 'snapshot/store', 'xds', 'proxy-class'],
  pipeline: ['compile', 'snapshot', 'snapshot/stored-inputs', 'inputs', 'model', 'xds'],
  history: ['pipeline', 'snapshot', 'snapshot/store', 'snapshot/stored-inputs', 'inputs', 'model', 'xds'],
  watch: [
    'history',
    'pipeline',
    'compile',
    'snapshot',
    'snapshot/store',
    'snapshot/stored-inputs',
    'inputs',
    'model',
    'xds',
  ],
  api: [
    'explain',
    'history',
    'pipeline',
    'snapshot',
    'snapshot/store',
    'snapshot/stored-inputs',
    'inputs',
    'model',
    'xds',
  ],
  cli: EVERY_LIBRARY_FOLDER,
  functions: [
    'api',
    'watch',
    'history',
    'pipeline',
    'snapshot',
    'snapshot/store',
    'snapshot/stored-inputs',
    'inputs',
    'model',
    'xds',
  ],
  bench: EVERY_LIBRARY_FOLDER,
  test: [],
};

/** The files of each unit (`test` has no rules: tests may import anything). */
const FILES = {
  version: { files: ['src/version.ts'] },
  'canonical-json': { files: ['src/canonical-json.ts'] },
  errors: { files: ['src/errors.ts'] },
  log: { files: ['src/log.ts'] },
  backoff: { files: ['src/backoff.ts'] },
  'full-gc': { files: ['src/full-gc.ts'] },
  pipeline: { files: ['src/pipeline.ts'] },
  snapshot: { files: ['src/snapshot/**/*.ts'], ignores: ['src/snapshot/store/**', 'src/snapshot/stored-inputs/**'] },
  functions: { files: ['functions/**/*.ts'] },
  bench: { files: ['bench/**/*.ts'] },
};
const filesOf = (unit) => FILES[unit] ?? { files: [`src/${unit}/**/*.ts`] };

const ROOT_FILES = new Set(['version', 'canonical-json', 'errors', 'log', 'backoff', 'full-gc', 'pipeline']);
const TOP_FOLDERS = new Set(['functions', 'bench', 'test']);

/** A relative import specifier naming the unit, as written from any file of another unit. */
function specifierRegex(unit) {
  const up = String.raw`^(\.{1,2}/)+`;
  if (ROOT_FILES.has(unit)) return `${up}(src/)?${unit}\\.js$`;
  if (TOP_FOLDERS.has(unit)) return `${up}${unit}/`;
  if (unit.startsWith('snapshot/')) return `${up}((src/)?snapshot/)?${unit.slice('snapshot/'.length)}/`;
  if (unit === 'snapshot') return `${up}(src/)?snapshot/(?!store/|stored-inputs/)`;
  return `${up}(src/)?${unit}/`;
}

/** Throws when the table lets two units import each other, directly or through others. */
export function assertAcyclic(allowed) {
  const state = new Map();
  const visit = (unit, path) => {
    if (state.get(unit) === 'done') return;
    if (state.get(unit) === 'open')
      throw new Error(`eslint.architecture.js: import cycle ${[...path, unit].join(' → ')}`);
    state.set(unit, 'open');
    for (const next of allowed[unit] ?? []) visit(next, [...path, unit]);
    state.set(unit, 'done');
  };
  for (const unit of Object.keys(allowed)) visit(unit, []);
}

/** One flat-config block per unit that forbids importing every unit it may not. */
export function architectureBlocks(allowed = ALLOWED) {
  assertAcyclic(allowed);
  const units = Object.keys(allowed);
  return units
    .filter((unit) => unit !== 'test')
    .map((unit) => {
      const ok = new Set([unit, ...allowed[unit], ...(LEAVES.includes(unit) ? [] : LEAVES)]);
      const message = `${unit} may import only ${[...ok].filter((u) => u !== unit).join(', ') || 'nothing of the project'} (README.md, Architecture).`;
      const patterns = units
        .filter((u) => !ok.has(u))
        .map((u) => ({ regex: specifierRegex(u), message: `${message} Not ${u}.` }));
      return { ...filesOf(unit), rules: { 'no-restricted-imports': ['error', { patterns }] } };
    });
}
