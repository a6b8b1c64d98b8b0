/**
 * The Telemetry tracing benchmark's mesh: the synthetic mesh traced mesh-wide, as meshes that send
 * spans to an OpenTelemetry collector are (a root-namespace Telemetry naming an `opentelemetry`
 * provider, its collector Service, the mesh config naming it). ./config-variant.ts measures it next
 * to the same mesh untraced and writes bench-results/telemetry-tracing.json.
 *
 *   node --expose-gc dist/bench/run.js --tracing [--sizes 1000]
 */
import type { RawDocument } from '../src/inputs/parse.js';

export function tracingDocuments(): RawDocument[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'otel-collector', namespace: 'istio-system' },
      spec: {
        clusterIP: '10.255.0.9',
        ports: [{ name: 'grpc-otlp', port: 4317 }],
        selector: { app: 'otel-collector' },
      },
    },
    {
      apiVersion: 'meshsnap.dev/v1alpha1',
      kind: 'MeshConfig',
      metadata: { name: 'mesh' },
      spec: {
        extensionProviders: [
          { name: 'otel', opentelemetry: { service: 'otel-collector.istio-system.svc.cluster.local', port: 4317 } },
        ],
      },
    },
    {
      apiVersion: 'telemetry.istio.io/v1',
      kind: 'Telemetry',
      metadata: { name: 'mesh-default', namespace: 'istio-system' },
      spec: { tracing: [{ providers: [{ name: 'otel' }], randomSamplingPercentage: 10 }] },
    },
  ].map((object, index) => ({ file: 'tracing.yaml', index, object }));
}
