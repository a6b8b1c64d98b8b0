/** A kubeconfig for the fake server. JSON is valid YAML, so it works as a --kubeconfig file too. */

export function kubeconfigText(server: string, context = 'fake'): string {
  return `${JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      // client-node refuses an http:// server unless TLS verification is explicitly skipped.
      clusters: [{ name: context, cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: context, user: { token: 'fake-token' } }],
      contexts: [{ name: context, context: { cluster: context, user: context, namespace: 'default' } }],
      'current-context': context,
    },
    null,
    2,
  )}\n`;
}
