/** The compiler's identity, recorded in every snapshot (a test keeps it equal to package.json). */
export const COMPILER = { name: 'meshsnap', version: '0.3.0' } as const;
