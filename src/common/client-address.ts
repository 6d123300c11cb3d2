import type { Request } from 'express';

/** The TCP peer's address (never X-Forwarded-For, which any client can write). */
export function clientAddress(request: Request): string {
  const address = request.socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
