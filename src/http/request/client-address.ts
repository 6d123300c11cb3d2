import type { IncomingMessage } from 'node:http';

/** The TCP peer's address (never X-Forwarded-For, which any client can write). */
export function clientAddress(request: IncomingMessage): string {
  const address = request.socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
