// Generates static protobufjs code for the Envoy xDS messages meshsnap encodes and serves.
//
// Why static code: protobufjs reflection builds encoders with `new Function`, which Cloudflare
// Workers (workerd) forbid. `pbjs -t static-module` emits plain functions that run everywhere.
// The .proto files are read from @grpc/grpc-js-xds at build time; none are kept in this repo.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildValidateRules } from './gen-validate-rules.mjs';
import { writeWireEncoders } from './gen-wire-encoders.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const xdsDeps = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
const protobufjsDir = dirname(require.resolve('protobufjs/package.json'));
const pbjs = join(dirname(require.resolve('protobufjs-cli/package.json')), 'bin', 'pbjs');
const pbts = join(dirname(require.resolve('protobufjs-cli/package.json')), 'bin', 'pbts');

/** The entry points; their imports are followed. */
const PROTOS = [
  'envoy/config/cluster/v3/cluster.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/config/listener/v3/listener.proto',
  'envoy/config/route/v3/route.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
  'envoy/extensions/filters/network/rbac/v3/rbac.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/fault/v3/fault.proto',
  'envoy/extensions/filters/http/cors/v3/cors.proto',
  'envoy/extensions/filters/http/rbac/v3/rbac.proto',
  'envoy/extensions/filters/http/ext_authz/v3/ext_authz.proto',
  'envoy/extensions/filters/network/ext_authz/v3/ext_authz.proto',
  'envoy/extensions/filters/http/jwt_authn/v3/config.proto',
  'envoy/extensions/path/match/uri_template/v3/uri_template_match.proto',
  'envoy/extensions/filters/listener/original_dst/v3/original_dst.proto',
  'envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto',
  'envoy/extensions/filters/listener/proxy_protocol/v3/proxy_protocol.proto',
  'envoy/extensions/filters/listener/http_inspector/v3/http_inspector.proto',
  'envoy/extensions/transport_sockets/tls/v3/tls.proto',
  'envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto',
  'envoy/extensions/transport_sockets/proxy_protocol/v3/upstream_proxy_protocol.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto',
  'envoy/extensions/access_loggers/file/v3/file.proto',
  'envoy/extensions/access_loggers/stream/v3/stream.proto',
  // Telemetry tracing's tracers and the request id extension (src/compile/listener/telemetry-tracing.ts).
  'envoy/config/trace/v3/zipkin.proto',
  'envoy/config/trace/v3/datadog.proto',
  'envoy/config/trace/v3/skywalking.proto',
  'envoy/config/trace/v3/opentelemetry.proto',
  'envoy/extensions/tracers/opentelemetry/resource_detectors/v3/environment_resource_detector.proto',
  'envoy/extensions/tracers/opentelemetry/resource_detectors/v3/dynatrace_resource_detector.proto',
  'envoy/extensions/tracers/opentelemetry/samplers/v3/dynatrace_sampler.proto',
  'envoy/extensions/request_id/uuid/v3/uuid.proto',
  'envoy/extensions/clusters/dynamic_forward_proxy/v3/cluster.proto',
  'envoy/extensions/filters/http/dynamic_forward_proxy/v3/dynamic_forward_proxy.proto',
  'envoy/extensions/filters/network/sni_dynamic_forward_proxy/v3/sni_dynamic_forward_proxy.proto',
  'envoy/extensions/formatter/req_without_query/v3/req_without_query.proto',
  // Typed configs EnvoyFilter patches commonly carry (converted by src/xds/json-message.ts).
  'envoy/extensions/filters/http/lua/v3/lua.proto',
  'envoy/extensions/filters/http/local_ratelimit/v3/local_rate_limit.proto',
  'envoy/extensions/filters/http/ratelimit/v3/rate_limit.proto',
  'envoy/extensions/filters/http/wasm/v3/wasm.proto',
  'envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto',
  'envoy/extensions/filters/http/header_to_metadata/v3/header_to_metadata.proto',
  'envoy/extensions/filters/http/compressor/v3/compressor.proto',
  'envoy/extensions/compression/gzip/compressor/v3/gzip.proto',
  'envoy/extensions/filters/http/buffer/v3/buffer.proto',
  'envoy/extensions/filters/http/grpc_web/v3/grpc_web.proto',
  'envoy/extensions/filters/http/grpc_stats/v3/config.proto',
  'envoy/extensions/filters/http/health_check/v3/health_check.proto',
  'envoy/extensions/filters/http/set_metadata/v3/set_metadata.proto',
  'envoy/extensions/filters/http/header_mutation/v3/header_mutation.proto',
  'envoy/extensions/filters/http/custom_response/v3/custom_response.proto',
  'envoy/extensions/filters/network/local_ratelimit/v3/local_rate_limit.proto',
  'envoy/extensions/filters/network/connection_limit/v3/connection_limit.proto',
  'envoy/extensions/filters/network/wasm/v3/wasm.proto',
  'envoy/extensions/filters/network/ratelimit/v3/rate_limit.proto',
  'udpa/type/v1/typed_struct.proto',
  'xds/type/v3/typed_struct.proto',
  'envoy/service/discovery/v3/ads.proto',
  'envoy/service/cluster/v3/cds.proto',
  'envoy/service/endpoint/v3/eds.proto',
  'envoy/service/listener/v3/lds.proto',
  'envoy/service/route/v3/rds.proto',
];

const outDir = join(repo, 'src', 'xds', 'gen');
const stamp = JSON.stringify({
  protos: PROTOS,
  xds: require('@grpc/grpc-js-xds/package.json').version,
  pbjs: require('protobufjs-cli/package.json').version,
  v: 3,
});
const stampFile = join(outDir, '.stamp');
const outputs = [
  'envoy.js',
  'envoy.d.ts',
  'descriptor.js',
  'descriptor.d.ts',
  'validate-rules.js',
  'validate-rules.d.ts',
].map((f) => join(outDir, f));
const fresh =
  existsSync(stampFile) &&
  readFileSync(stampFile, 'utf8') === stamp &&
  outputs.every((f) => existsSync(f) && statSync(f).size > 0);
if (!fresh) {
  mkdirSync(outDir, { recursive: true });
  const includes = ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => join(xdsDeps, d));
  includes.push(protobufjsDir); // google/protobuf/descriptor.proto lives in protobufjs
  const paths = includes.flatMap((p) => ['-p', p]);
  const run = (bin, args) =>
    execFileSync(process.execPath, [bin, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
  // 1. Static encoders/decoders. Proto field names are kept (snake_case), as in Envoy's docs and config_dump.
  run(pbjs, [
    '-t',
    'static-module',
    '-w',
    'es6',
    '--keep-case',
    '--no-verify',
    '--no-delimited',
    '--no-service',
    ...paths,
    '-o',
    outputs[0],
    ...PROTOS,
  ]);
  // 2. TypeScript declarations for them: every Envoy message gets a precise `$Properties` interface.
  run(pbts, ['-o', outputs[1], outputs[0]]);
  // 3. The descriptor as data (no code), used to render proto3 JSON (Any, Struct, Duration, wrappers).
  const json = join(outDir, 'descriptor.json');
  run(pbjs, ['-t', 'json', '--keep-case', ...paths, '-o', json, ...PROTOS]);
  writeFileSync(
    outputs[2],
    `// Generated by scripts/gen-protos.mjs. Do not edit.\nexport default ${readFileSync(json, 'utf8')};\n`,
  );
  writeFileSync(
    outputs[3],
    '// Generated by scripts/gen-protos.mjs. Do not edit.\nimport type { DescriptorRoot } from "../descriptor-types.js";\ndeclare const descriptor: DescriptorRoot;\nexport default descriptor;\n',
  );
  unlinkSync(json);
  // 4. The protoc-gen-validate rules of the same protos, as data (src/xds/validate/ checks them).
  writeFileSync(
    outputs[4],
    `// Generated by scripts/gen-protos.mjs from the protos' (validate.rules) options. Do not edit.\nexport default ${JSON.stringify(buildValidateRules(includes, PROTOS))};\n`,
  );
  writeFileSync(
    outputs[5],
    '// Generated by scripts/gen-protos.mjs. Do not edit.\nimport type { RuleTable } from "../validate/rule-table.js";\ndeclare const rules: RuleTable;\nexport default rules;\n',
  );
  writeFileSync(stampFile, stamp);
  console.error(`generated Envoy protobuf code in ${outDir}`);
}

// 5. The fast writer's per-type functions (src/xds/wire/), derived from the descriptor; rewritten
// when the descriptor or their generator changed.
const wireEncoders = join(outDir, 'wire-encoders.js');
const generators = ['gen-wire-encoders.mjs', 'gen-wire-schema.mjs'].map((f) => join(repo, 'scripts', f));
const wireBase = Math.max(statSync(outputs[2]).mtimeMs, ...generators.map((f) => statSync(f).mtimeMs));
if (!fresh || !existsSync(wireEncoders) || statSync(wireEncoders).mtimeMs < wireBase)
  writeWireEncoders(outputs[2], wireEncoders, join(outDir, 'wire-encoders.d.ts'));

// tsc does not copy plain .js files; place the generated code beside the compiled output.
const copyAt = process.argv.indexOf('--copy');
if (copyAt >= 0) {
  const dist = join(repo, process.argv[copyAt + 1] ?? 'dist', 'src', 'xds', 'gen');
  mkdirSync(dist, { recursive: true });
  for (const f of ['envoy.js', 'descriptor.js', 'validate-rules.js', 'wire-encoders.js'])
    copyFileSync(join(outDir, f), join(dist, f));
}
