import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import {
  Coding,
  Effort,
  compress,
  compressor,
  etagMatches,
  heldEtag,
  responseCoding,
} from '@/http/reply/content-coding';

/** A body sent as it is produced: chunks of bytes or text, pulled one at a time with back-pressure. */
export type ReplyStream = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

/** The compressed forms of a body made so far, by coding. */
export type Encoded = Partial<Record<Coding, Buffer>>;

/** A body kept for reuse and the compressed forms of it made so far (held by whoever keeps the body). */
export interface Representations {
  body: string | Buffer;
  encoded?: Encoded;
}

/**
 * A body kept for reuse (a cached result page, a documentation asset): {@link sendReply} sends a compressed
 * form of it that is kept as it is, with no compression, and makes a missing one once, adds it to `kept` and
 * calls `grew`, so that the keeper counts its bytes. Requests that ask for it while it is being made wait
 * for that one compression.
 */
export class KeptBody {
  constructor(
    readonly kept: Representations,
    readonly effort: Effort = 'body',
    readonly grew?: () => void,
  ) {}
}

/**
 * A handler's whole answer, before HTTP: status, headers and body (none, text or bytes, or a stream). Routes
 * that answer with it take no `@Res()`, so Nest's Express path and the fast route send it alike, through
 * {@link sendReply}. A class, so the writer on Nest's path tells it from other results with one `instanceof`.
 */
export class HttpReply {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly body: string | Buffer | KeptBody | ReplyStream | null,
    /** Headers set on every response (the security headers) that this one goes without. */
    readonly without: readonly string[] = [],
  ) {}
}

/**
 * A script of Drey's own kept in memory (ReDoc's bundle, Chart.js for dashboards): public, cached a day,
 * compressed once per coding, with an ETag of its content; a client that holds it gets 304.
 */
export class KeptScript {
  private readonly body: KeptBody;
  private readonly etag: string;

  constructor(source: string) {
    this.body = new KeptBody({ body: Buffer.from(source) }, 'asset');
    this.etag = `"${createHash('sha1').update(this.body.kept.body).digest('base64url')}"`;
  }

  reply(ifNoneMatch: string | undefined): HttpReply {
    const headers = {
      'Content-Type': 'application/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=86400',
      ETag: this.etag,
      Vary: 'Accept-Encoding',
    };
    return etagMatches(ifNoneMatch, this.etag)
      ? new HttpReply(304, headers, null)
      : new HttpReply(200, headers, this.body);
  }
}

/**
 * A handler's other results as Express' `res.send` answers them on Nest's path (a fast route may return
 * them too): nothing is an empty body, a string is HTML, bytes are bytes, anything else is JSON.
 */
export function replyOf(result: unknown, status: number): HttpReply {
  if (result instanceof HttpReply) return result;
  if (result === undefined || result === null) return new HttpReply(status, {}, null);
  if (typeof result === 'string') {
    return new HttpReply(status, { 'Content-Type': 'text/html; charset=utf-8' }, result);
  }
  if (Buffer.isBuffer(result)) {
    return new HttpReply(status, { 'Content-Type': 'application/octet-stream' }, result);
  }
  return new HttpReply(
    status,
    { 'Content-Type': 'application/json; charset=utf-8' },
    JSON.stringify(result),
  );
}

/**
 * The one writer of a reply, on Node's response (Express' is one too). A body in hand is written at once,
 * with no promise: the cached dataset read, the most frequent request, is one. A stream's status and headers
 * wait for its first chunk, so an error while it starts (a query that fails) rejects with nothing sent and is
 * answered by the exception filter in the layout's shape; an error after that destroys the connection, as a
 * truncated body must not look complete, and rejects too, so that the filter logs it.
 *
 * Compression (content-coding.ts) is decided here, for every route alike, from the request's
 * `Accept-Encoding` and the reply's type and size: a kept body's compressed form is sent as kept, a body
 * that has none is compressed on the thread pool (the only case a body in hand returns a promise), and a
 * stream goes through a zlib stream with back-pressure.
 */
export function sendReply(reply: HttpReply, response: ServerResponse): Promise<void> | undefined {
  const { body } = reply;
  if (body === null) {
    writeHead(reply, response);
    // The variant the client holds stays its own (content-coding.ts, heldEtag).
    const etag = response.getHeader('ETag');
    if (reply.status === 304 && typeof etag === 'string') {
      response.setHeader('ETag', heldEtag(response, etag));
    }
    response.end();
    return undefined;
  }
  if (body instanceof KeptBody || typeof body === 'string' || Buffer.isBuffer(body)) {
    writeHead(reply, response);
    const kept = body instanceof KeptBody ? body.kept : { body };
    const length = Buffer.byteLength(kept.body);
    const etag = response.getHeader('ETag');
    const coding = responseCoding(response, length);
    if (coding === undefined) return endWith(response, kept.body);
    const encoded = kept.encoded?.[coding];
    if (encoded !== undefined) return endWith(response, encoded);
    const making =
      body instanceof KeptBody ? makeOnce(body, coding) : compress(kept.body, coding, 'body');
    return making.then(
      (made) => {
        endWith(response, made);
      },
      () => {
        // zlib does not fail on bytes in memory; should it, the body goes plain.
        response.removeHeader('Content-Encoding');
        if (etag !== undefined) response.setHeader('ETag', etag);
        endWith(response, kept.body);
      },
    );
  }
  return sendStream(reply, body, response);
}

/** Compressions of kept bodies under way, so that requests arriving together share one. */
const making = new WeakMap<Representations, Partial<Record<Coding, Promise<Buffer>>>>();

/** The compressed form of a kept body, made by one compression however many requests ask meanwhile. */
function makeOnce(body: KeptBody, coding: Coding): Promise<Buffer> {
  const { kept } = body;
  const pending = making.get(kept) ?? {};
  const running = pending[coding];
  if (running) return running;
  const made = compress(kept.body, coding, body.effort).then((bytes) => {
    kept.encoded = { ...kept.encoded, [coding]: bytes };
    body.grew?.();
    return bytes;
  });
  pending[coding] = made;
  making.set(kept, pending);
  const done = () => {
    delete pending[coding];
  };
  made.then(done, done);
  return made;
}

function writeHead(reply: HttpReply, response: ServerResponse): void {
  response.statusCode = reply.status;
  for (const name of reply.without) response.removeHeader(name);
  for (const name in reply.headers) response.setHeader(name, reply.headers[name]);
}

function endWith(response: ServerResponse, body: string | Buffer): undefined {
  response.setHeader('Content-Length', Buffer.byteLength(body));
  response.end(body);
  return undefined;
}

async function sendStream(
  reply: HttpReply,
  body: ReplyStream,
  response: ServerResponse,
): Promise<void> {
  const chunks: Iterator<Uint8Array | string> | AsyncIterator<Uint8Array | string> =
    Symbol.asyncIterator in body ? body[Symbol.asyncIterator]() : body[Symbol.iterator]();
  let sent = false;
  let zipped: ReturnType<typeof compressor> | undefined;
  try {
    let step = await chunks.next();
    writeHead(reply, response);
    const coding = responseCoding(response);
    // Compressed, the chunks go into zlib, which writes to the response as it takes them (pipe() pauses zlib
    // while the response is full, so zlib's own input fills and write() returns false: back-pressure holds).
    let sink: Writable = response;
    if (coding !== undefined) {
      zipped = compressor(coding);
      zipped.on('error', () => response.destroy());
      zipped.pipe(response);
      sink = zipped;
    }
    sent = true;
    for (; !step.done; step = await chunks.next()) {
      // The client went away: what is left is not produced (return() below releases it).
      if (response.destroyed) return;
      if (!sink.write(step.value)) await writable(sink, response);
    }
    sink.end();
    zipped = undefined;
  } catch (error) {
    if (sent) response.destroy();
    throw error;
  } finally {
    // A compressor left unended (client gone, error) lets go of its buffers now.
    zipped?.destroy();
    // Ends a producer stopped early (its `finally` blocks free what it holds); a finished one ignores it.
    try {
      await chunks.return?.();
    } catch {
      // A producer that fails while it stops has nothing more to send or free.
    }
  }
}

/** Resolves once the sink drains, or the response closes (the client went away). */
function writable(sink: Writable, response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      sink.off('drain', done);
      response.off('close', done);
      resolve();
    };
    sink.on('drain', done);
    response.on('close', done);
  });
}
