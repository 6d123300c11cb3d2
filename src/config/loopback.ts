import { isIP } from 'node:net';

/**
 * Whether HOST binds to a loopback address only: then ALLOWED_HOSTS applies, and the edge answers only the
 * loopback names and those (`http/request/host-rule.ts`).
 */
export function isLoopbackHost(host: string): boolean {
  const address = host.toLowerCase();
  if (address === 'localhost') return true;
  if (isIP(address) === 4) return address.startsWith('127.');
  return address === '::1' || (isIP(address) === 6 && address.startsWith('::ffff:127.'));
}

/**
 * The HTTP origin a process on this machine reaches a server by, from the address it listens on: the
 * loopback address for an unspecified one (`0.0.0.0`, `::`), the address itself otherwise.
 */
export function localOrigin(address: { address: string; port: number }): string {
  const host =
    address.address === '0.0.0.0' || address.address === ''
      ? '127.0.0.1'
      : address.address === '::'
        ? '[::1]'
        : isIP(address.address) === 6
          ? `[${address.address}]`
          : address.address;
  return `http://${host}:${address.port}`;
}
