// No import cycles between files of src/, functions/ and bench/ (type-only imports included).
// `npm run lint` runs it; the allowed imports between folders are eslint's (architecture.mjs).
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A file imports itself through others. Move what both sides need into a third file (README, Architecture).',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/xds/gen/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
