import type { ServerResponse } from 'node:http';

/** A body sent as it is produced: chunks of bytes or text, pulled one at a time with back-pressure. */
export type ReplyStream = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

/**
 * A handler's whole answer, before HTTP: status, headers and body (none, text or bytes, or a stream). Routes
 * that answer with it take no `@Res()`, so Nest's Express path and the fast route send it alike, through
 * {@link sendReply}. A class, so the writer on Nest's path tells it from other results with one `instanceof`.
 */
export class HttpReply {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly body: string | Buffer | ReplyStream | null,
  ) {}
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
 */
export function sendReply(reply: HttpReply, response: ServerResponse): Promise<void> | undefined {
  const { body } = reply;
  if (body === null || typeof body === 'string' || Buffer.isBuffer(body)) {
    writeHead(reply, response);
    if (body === null) response.end();
    else {
      response.setHeader('Content-Length', Buffer.byteLength(body));
      response.end(body);
    }
    return undefined;
  }
  return sendStream(reply, body, response);
}

function writeHead(reply: HttpReply, response: ServerResponse): void {
  response.statusCode = reply.status;
  for (const name in reply.headers) response.setHeader(name, reply.headers[name]);
}

async function sendStream(
  reply: HttpReply,
  body: ReplyStream,
  response: ServerResponse,
): Promise<void> {
  const chunks: Iterator<Uint8Array | string> | AsyncIterator<Uint8Array | string> =
    Symbol.asyncIterator in body ? body[Symbol.asyncIterator]() : body[Symbol.iterator]();
  let sent = false;
  try {
    let step = await chunks.next();
    writeHead(reply, response);
    sent = true;
    for (; !step.done; step = await chunks.next()) {
      // The client went away: what is left is not produced (return() below releases it).
      if (response.destroyed) return;
      if (!response.write(step.value)) await writable(response);
    }
    response.end();
  } catch (error) {
    if (sent) response.destroy();
    throw error;
  } finally {
    // Ends a producer stopped early (its `finally` blocks free what it holds); a finished one ignores it.
    try {
      await chunks.return?.();
    } catch {
      // A producer that fails while it stops has nothing more to send or free.
    }
  }
}

/** Resolves once the response drains, or closes (the client went away). */
function writable(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
