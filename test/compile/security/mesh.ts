/** A small mesh for the security tests: pods and services in YAML, compiled through the pipeline. */
import { compileTexts, type PipelineResult } from '../../../src/pipeline.js';
import { nodeSha256Hex } from '../../../src/snapshot/store/local.js';
import { served, type TestNode } from '../../helpers/mesh.js';

export function pod(
  name: string,
  ip: string,
  labels: Record<string, string>,
  namespace = 'default',
  ports: number[] = [],
) {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${namespace}
  labels: ${JSON.stringify({ ...labels, 'security.istio.io/tlsMode': 'istio' })}
spec:
  serviceAccountName: ${name}
  containers:
  - name: app
    ports: ${JSON.stringify(ports.map((containerPort) => ({ containerPort })))}
status:
  phase: Running
  podIP: ${ip}
  podIPs: [{ ip: ${ip} }]
  conditions: [{ type: Ready, status: 'True' }]`;
}

let nextClusterIp = 1;

export function service(
  name: string,
  selector: Record<string, string>,
  ports: { port: number; name: string; targetPort?: number }[],
  namespace = 'default',
  clusterIP = `10.96.0.${nextClusterIp++}`,
) {
  return `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  clusterIP: ${clusterIP}
  selector: ${JSON.stringify(selector)}
  ports: ${JSON.stringify(ports.map((p) => ({ protocol: 'TCP', targetPort: p.port, ...p })))}`;
}

export function compileYaml(...docs: string[]): PipelineResult {
  return compileTexts([{ file: 'mesh.yaml', text: docs.join('\n---\n') }], { hasher: nodeSha256Hex });
}

export function sidecarNode(name: string, ip: string, labels: Record<string, string>, namespace = 'default'): TestNode {
  return {
    id: `sidecar~${ip}~${name}.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { NAMESPACE: namespace, LABELS: { ...labels, 'security.istio.io/tlsMode': 'istio' }, INSTANCE_IPS: ip },
  };
}

type Json = Record<string, unknown>;

/** The virtualInbound listener a node is served, as proto3 JSON. */
export function virtualInbound(result: PipelineResult, node: TestNode): Json {
  const listener = served(result, node).resources.listeners.get('virtualInbound');
  if (!listener) throw new Error('no virtualInbound');
  return listener;
}

/** The names of the filters of every chain, by chain name and match (for order checks). */
export function chainFilters(listener: Json): { name: string; filters: string[]; http?: string[] }[] {
  return (listener.filter_chains as Json[]).map((c) => {
    const filters = (c.filters as Json[]).map((f) => String(f.name));
    const hcm = (c.filters as Json[]).find((f) => f.name === 'envoy.filters.network.http_connection_manager');
    const http = hcm ? ((hcm.typed_config as Json).http_filters as Json[]).map((f) => String(f.name)) : undefined;
    return { name: String(c.name), filters, ...(http ? { http } : {}) };
  });
}
