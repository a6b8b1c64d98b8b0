/** Unix domain socket addresses, as Sidecar egress binds and Gateway server binds write them. */
import type { Reader } from './reader.js';

export const UNIX_ADDRESS_PREFIX = 'unix://';

/** istiod's ValidateUnixAddress: an absolute path to a file, or an abstract socket `@name`. */
export function checkUnixAddress(r: Reader, addr: string, path: string): void {
  if (addr.length === 0) r.error(path, 'unix address must not be empty');
  else if (!addr.startsWith('@') && (!addr.startsWith('/') || addr.endsWith('/')))
    r.error(path, `${addr.slice(0, 60)} is not an absolute path to a file`);
}
