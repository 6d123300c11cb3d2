import type { Response } from 'express';
import { CONTENT_TYPES } from '@/datasets/results/stream-formats';

/** What a dataset results request is answered with, before HTTP: the service's side of the reply. */
export type ResultReply =
  /** A serialised JSON response, kept for the next identical request. */
  | { kind: 'body'; body: string; etag?: string }
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

async function* asBytes(chunks: AsyncIterable<Uint8Array | string> | Iterable<string>) {
  for await (const chunk of chunks) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
}

/** The headers of a reply. */
function replyHeaders(reply: ResultReply): Record<string, string> {
  const headers: Record<string, string> = {};
  if (reply.kind !== 'not-modified') {
    headers['Content-Type'] = reply.kind === 'body' ? CONTENT_TYPES.json : reply.contentType;
  }
  if (reply.etag) headers.ETag = reply.etag;
  if (reply.kind === 'stream' && reply.filename) {
    headers['Content-Disposition'] = `attachment; filename="${reply.filename}"`;
  }
  return headers;
}

/**
 * Puts a reply on the wire through Nest. A body is returned as a string (Nest sends it as it is, with the
 * type set here; a Buffer would be JSON-encoded as an array of bytes). A 304 and a stream are web
 * `Response`s: Nest applies their status and headers only once the first chunk exists, so an error while
 * the query starts is still answered by the error filter in the layout's shape.
 */
export function toHttp(reply: ResultReply, response: Response): string | globalThis.Response {
  const headers = replyHeaders(reply);
  switch (reply.kind) {
    case 'body':
      for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
      return reply.body;
    case 'not-modified':
      return new globalThis.Response(null, { status: 304, headers });
    case 'stream':
      return new globalThis.Response(ReadableStream.from(asBytes(reply.chunks)), { headers });
  }
}
