/** `meshsnap show`: its option table (used by --help and the README test), without the command's implementation. */
import { command, storeOptions } from '../args.js';
import { nodeOptions, typeOption } from './options.js';

export const showSpec = command({
  name: 'show',
  summary: 'print what a proxy would be served (config_dump JSON, with the chosen class)',
  args: '[VERSION|latest|tag:NAME|candidate:N]',
  positionals: { max: 1 },
  options: { ...nodeOptions, node: { ...nodeOptions.node, required: true }, ...typeOption, ...storeOptions },
  examples: [
    `meshsnap show latest --type routes --node 'sidecar~10.244.1.10~web-v1-6c9f7d8b5-k2x7p.shop~shop.svc.cluster.local' --metadata '{"NAMESPACE":"shop","LABELS":{"app":"web","version":"v1"}}'`,
    `meshsnap show tag:v1.2 --node 'grpc~10.244.2.7~client.shop~shop.svc.cluster.local' --metadata '{"NAMESPACE":"shop","GENERATOR":"grpc"}'`,
  ],
});
