// Bundles the AWS Lambda handlers into one ESM file each, ready to zip:
//   dist-lambda/api/index.mjs        handler: index.handler  (functions/aws/api.ts)
//   dist-lambda/s3-inputs/index.mjs  handler: index.handler  (functions/aws/s3-inputs.ts)
// Usage: node scripts/bundle-lambda.mjs [--outdir DIR]   (infra/aws zips DIR/<name>/)
//
// Everything is bundled, the AWS SDK included: the runtime's own SDK copy moves on its own schedule,
// and the store is tested against the pinned one. The static protobuf code is generated first
// (scripts/gen-protos.mjs), as `npm run build` does.
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const at = process.argv.indexOf('--outdir');
const outdir = resolve(at > 0 && process.argv[at + 1] ? process.argv[at + 1] : join(repo, 'dist-lambda'));

execFileSync(process.execPath, [join(repo, 'scripts', 'gen-protos.mjs')], { stdio: 'inherit' });

const result = await build({
  entryPoints: { 'api/index': 'functions/aws/api.ts', 's3-inputs/index': 'functions/aws/s3-inputs.ts' },
  absWorkingDir: repo,
  outdir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // CommonJS dependencies (protobufjs) call require() for Node built-ins, which an ESM bundle lacks.
  banner: {
    js: "import { createRequire as __meshsnapCreateRequire } from 'node:module'; const require = __meshsnapCreateRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});
for (const [file, out] of Object.entries(result.metafile.outputs)) {
  if (file.endsWith('.mjs')) console.log(`${file}  ${(out.bytes / 1024).toFixed(0)} KiB`);
}
