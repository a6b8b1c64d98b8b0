/** The kubeconfig `watch` and `serve` use: `--kubeconfig FILE` or the default chain ($KUBECONFIG, ~/.kube/config, in-cluster), then `--context`. */
import { KubeConfig } from '@kubernetes/client-node';
import { UsageError } from './args.js';

export function loadKubeConfig(file: string | undefined, context: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (file !== undefined) kc.loadFromFile(file);
  else kc.loadFromDefault();
  if (context !== undefined) {
    if (!kc.getContextObject(context)) throw new UsageError(`no context ${JSON.stringify(context)} in the kubeconfig`);
    kc.setCurrentContext(context);
  }
  return kc;
}
