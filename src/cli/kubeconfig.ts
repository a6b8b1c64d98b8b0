/**
 * The kubeconfig `watch` and `serve` use: `--kubeconfig FILE` or the default chain ($KUBECONFIG,
 * ~/.kube/config, in-cluster), then `--context`. A missing or unusable one is one usage error that
 * says where it looked and what it found (client-node would otherwise fall back to
 * http://localhost:8080 and fail on every retry with a message about TLS).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { UsageError } from './args.js';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export class KubeConfigError extends UsageError {}

export interface KubeConfigEnv {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  readonly exists: (path: string) => boolean;
}

const nodeEnv = (): KubeConfigEnv => ({ env: process.env, home: homedir(), exists: existsSync });

/** `hint` ends the error, e.g. how to run without a cluster. */
export function loadKubeConfig(
  file: string | undefined,
  context: string | undefined,
  hint = '',
  where: KubeConfigEnv = nodeEnv(),
): KubeConfig {
  const fail = (lines: readonly string[]): never => {
    throw new KubeConfigError(
      ['no usable kubeconfig:', ...lines.map((l) => `  ${l}`), ...(hint ? [hint] : [])].join('\n'),
    );
  };
  const kc = new KubeConfig();
  const source = chooseSource(file, where);
  if (source.kind === 'none') return fail(source.looked);
  try {
    if (source.kind === 'in-cluster') kc.loadFromCluster();
    else kc.loadFromFile(source.path);
  } catch (err) {
    return fail([`${source.label}: cannot be read: ${(err as Error).message}`]);
  }
  if (context !== undefined) {
    if (!kc.getContextObject(context))
      throw new UsageError(`--context: no context ${JSON.stringify(context)} in ${source.label}`);
    kc.setCurrentContext(context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    return fail([`${source.label}: its current context ${JSON.stringify(kc.getCurrentContext())} names no cluster`]);
  if (cluster.server.startsWith('http://') && !cluster.skipTLSVerify) {
    return fail([
      `${source.label}: cluster ${JSON.stringify(cluster.name)} is plain HTTP (${cluster.server}); the client refuses it unless the cluster sets insecure-skip-tls-verify: true`,
    ]);
  }
  return kc;
}

type Source =
  | { kind: 'file'; path: string; label: string }
  | { kind: 'in-cluster'; label: string }
  | { kind: 'none'; looked: string[] };

function chooseSource(file: string | undefined, { env, home, exists }: KubeConfigEnv): Source {
  if (file !== undefined)
    return exists(file)
      ? { kind: 'file', path: file, label: `--kubeconfig ${file}` }
      : { kind: 'none', looked: [`--kubeconfig ${file}: no such file`] };
  const looked = ['--kubeconfig: not given'];
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  const fromEnv = listed.find((p) => exists(p));
  if (fromEnv !== undefined) return { kind: 'file', path: fromEnv, label: `$KUBECONFIG file ${fromEnv}` };
  looked.push(listed.length === 0 ? '$KUBECONFIG: not set' : `$KUBECONFIG: none of ${listed.join(', ')} exists`);
  const homeConfig = join(home, '.kube', 'config');
  if (exists(homeConfig)) return { kind: 'file', path: homeConfig, label: homeConfig };
  looked.push(`${homeConfig}: no such file`);
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && exists(SERVICE_ACCOUNT_TOKEN))
    return { kind: 'in-cluster', label: 'the in-cluster service account' };
  looked.push(
    env.KUBERNETES_SERVICE_HOST
      ? `in-cluster: ${exists(SERVICE_ACCOUNT_TOKEN) ? '$KUBERNETES_SERVICE_PORT is not set' : `no service account token at ${SERVICE_ACCOUNT_TOKEN}`}`
      : 'in-cluster: $KUBERNETES_SERVICE_HOST is not set (not running in a pod)',
  );
  return { kind: 'none', looked };
}
