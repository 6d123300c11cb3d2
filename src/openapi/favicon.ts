import { createHash } from 'node:crypto';
import { etagMatches } from '@/http/reply/content-coding';
import { HttpReply } from '@/http/reply/http-reply';

/**
 * Drey's icon, a 32×32 PNG (147 bytes: three white bars on a blue rounded square), kept here rather than as a
 * file so that the build copies nothing: browsers ask every page's origin for `/favicon.ico`, and Swagger UI
 * and ReDoc link it, so that no page of the service logs a 404 for its icon and none is loaded from elsewhere.
 * A PNG answered at `.ico` is what browsers take (they read the bytes, not the name).
 */
const FAVICON = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAAAWklEQVR42u3XuQ0AIAxD0WzCaAzE0NBzCVDCIb6ltPiVWKQR50PUPBmJdukUZld5FbG7vED8DbB4OE8XAQCARQkAAADUAKslAAAAeAvAr/gKwPFpdsU4PTXPE2w6/qkMhsU3AAAAAElFTkSuQmCC',
  'base64',
);
const ETAG = `"${createHash('sha1').update(FAVICON).digest('base64url')}"`;

/** Where the pages link the icon (absolute: `/docs/`, with its slash, resolves a relative link elsewhere). */
export const FAVICON_PATH = '/favicon.ico';

/** The icon, public and cached a day, or 304 for a client that holds it. */
export function faviconReply(ifNoneMatch: string | undefined): HttpReply {
  const headers = {
    'Content-Type': 'image/png',
    'Cache-Control': 'public, max-age=86400',
    ETag: ETAG,
  };
  return etagMatches(ifNoneMatch, ETAG)
    ? new HttpReply(304, headers, null)
    : new HttpReply(200, headers, FAVICON);
}
