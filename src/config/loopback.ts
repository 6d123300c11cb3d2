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
