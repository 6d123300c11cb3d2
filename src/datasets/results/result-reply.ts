import { HttpReply, KeptBody } from '@/http/reply/http-reply';
import { CONTENT_TYPES } from '@/datasets/results/stream-formats';

/** What a dataset results request is answered with, before HTTP: the service's side of the reply. */
export type ResultReply =
  /**
   * A serialised JSON response, kept for the next identical request (`kept`: as kept, with its compressed
   * forms, which the writer sends as they are or makes once).
   */
  | { kind: 'body'; body: string | Buffer; etag?: string; filename?: string; kept?: KeptBody }
  /** The client's copy (`If-None-Match`) is current. */
  | { kind: 'not-modified'; etag: string }
  /** Written as it is produced: a large JSON page, or a CSV or NDJSON export. */
  | {
      kind: 'stream';
      contentType: string;
      chunks: AsyncIterable<Uint8Array | string> | Iterable<string>;
      etag?: string;
      filename?: string;
    };

/** The headers of a reply. */
function replyHeaders(reply: ResultReply): Record<string, string> {
  const headers: Record<string, string> = {};
  if (reply.kind !== 'not-modified') {
    headers['Content-Type'] = reply.kind === 'body' ? CONTENT_TYPES.json : reply.contentType;
  }
  if (reply.etag) headers.ETag = reply.etag;
  // The 200 a 304 stands for varies so (a JSON body is compressed by Accept-Encoding, http-reply.ts).
  if (reply.kind === 'not-modified') headers.Vary = 'Accept-Encoding';
  // A download: an export, or a result whose x_format names its format (decisions.md, "Results").
  if (reply.kind !== 'not-modified' && reply.filename) {
    headers['Content-Disposition'] = `attachment; filename="${reply.filename}"`;
  }
  return headers;
}

/**
 * The reply as HTTP: a body in hand (sent at once, with no promise: the cached read is the most frequent
 * request), a 304 with no body, or a stream whose status and headers wait for its first chunk, so an error
 * while the query starts is still answered by the error filter in the layout's shape. `sendReply` writes
 * it, on the fast route and on Nest's path alike.
 */
export function toHttp(reply: ResultReply): HttpReply {
  const headers = replyHeaders(reply);
  switch (reply.kind) {
    case 'body':
      return new HttpReply(200, headers, reply.kept ?? reply.body);
    case 'not-modified':
      return new HttpReply(304, headers, null);
    case 'stream':
      return new HttpReply(200, headers, reply.chunks);
  }
}
