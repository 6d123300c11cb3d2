import { createHash } from 'node:crypto';
import type { ResultCodec } from '@/cache/tiered-cache';

/** A rendered dashboard as the cache keeps it: its bytes, their type, and an ETag made from the bytes. */
export interface RenderedPage {
  contentType: string;
  body: Buffer;
  etag: string;
}

/**
 * Redis holds strings: the body travels as base64, a third larger than the PNG, which the entry bound
 * (RESULT_CACHE_MAX_ENTRY_MB) and Redis' byte accounting count as stored. A PNG of the example's dashboard is
 * about 136 KB; JSON with base64 keeps one codec for every kind of body rather than a binary Redis path of
 * our own beside the shared store's scripts.
 */
export const RENDERED_PAGE_CODEC: ResultCodec<RenderedPage> = {
  encode: ({ contentType, body, etag }) =>
    JSON.stringify({ contentType, etag, body: body.toString('base64') }),
  decode(text) {
    const { contentType, etag, body } = JSON.parse(text) as Record<string, string>;
    return { contentType, etag, body: Buffer.from(body, 'base64') };
  },
  // The Buffer's bytes live outside the V8 heap but in the process all the same; the rest is small.
  bytes: (page) => page.body.length + page.contentType.length + page.etag.length + 200,
  // A failed render is not shared: a process waiting for it renders itself once the lock is free, and
  // answers its own error (a template's line, a render timeout), as the owner did.
  encodeError: () => undefined,
  decodeError: (text) => new Error(text),
};

/** A strong ETag of a body, computed once when it is rendered and kept with it. */
export function etagOfBody(body: Buffer): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}
