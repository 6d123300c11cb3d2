import { type IncomingMessage, type ServerResponse, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpReply, replyOf, sendReply } from '@/http/reply/http-reply';

/** Serves one request with `serve`, returns what the client got (or the error that cut it) and the write's outcome. */
async function exchange(serve: (response: ServerResponse) => Promise<void> | undefined): Promise<{
  status?: number;
  headers?: IncomingMessage['headers'];
  body?: string;
  cut: boolean;
  sent: unknown;
}> {
  let sent: Promise<unknown> = Promise.resolve('not served');
  const server = createServer((_request, response) => {
    sent = Promise.resolve(serve(response)).then(
      () => 'resolved',
      (error: Error) => {
        if (!response.headersSent) response.end('unsent');
        return error.message;
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const got = await new Promise<{
      status?: number;
      headers?: IncomingMessage['headers'];
      body?: string;
      cut: boolean;
    }>((resolve) => {
      get({ host: '127.0.0.1', port, path: '/' }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode, headers: response.headers, body, cut: false }),
        );
        response.on('error', () => resolve({ status: response.statusCode, body, cut: true }));
      }).on('error', () => resolve({ cut: true }));
    });
    return { ...got, sent: await sent };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('sendReply', () => {
  it('sends a reply without the headers it goes without, set before it on every response', async () => {
    const got = await exchange((response) => {
      response.setHeader('X-Frame-Options', 'DENY');
      response.setHeader('X-Content-Type-Options', 'nosniff');
      return sendReply(new HttpReply(200, {}, 'framed', ['X-Frame-Options']), response);
    });
    expect(got.headers?.['x-frame-options']).toBeUndefined();
    expect(got.headers?.['x-content-type-options']).toBe('nosniff');
    expect(got.body).toBe('framed');
  });

  it('writes a body in hand at once, with its length, and no promise', async () => {
    let returned: unknown = 'unset';
    const got = await exchange((response) => {
      returned = sendReply(new HttpReply(201, { 'Content-Type': 'text/plain' }, 'héllo'), response);
      return undefined;
    });
    expect(returned).toBeUndefined();
    expect(got.status).toBe(201);
    expect(got.headers?.['content-type']).toBe('text/plain');
    expect(got.headers?.['content-length']).toBe(String(Buffer.byteLength('héllo')));
    expect(got.body).toBe('héllo');
  });

  it('sends a stream with its head only once the first chunk exists', async () => {
    async function* rows() {
      await Promise.resolve();
      yield 'a,b\n';
      yield Buffer.from('1,2\n');
    }
    const got = await exchange((response) =>
      sendReply(new HttpReply(200, { 'Content-Type': 'text/csv' }, rows()), response),
    );
    expect([got.status, got.headers?.['content-type'], got.body]).toEqual([
      200,
      'text/csv',
      'a,b\n1,2\n',
    ]);
    expect(got.sent).toBe('resolved');
  });

  it('rejects with nothing sent when a stream fails before its first chunk', async () => {
    // eslint-disable-next-line require-yield
    async function* failing(): AsyncGenerator<string> {
      await Promise.resolve();
      throw new Error('the query failed');
    }
    const got = await exchange((response) =>
      sendReply(new HttpReply(200, { 'Content-Type': 'text/csv' }, failing()), response),
    );
    // The caller answered instead (here with 200 'unsent'): the reply's head was never written.
    expect([got.body, got.headers?.['content-type'], got.sent]).toEqual([
      'unsent',
      undefined,
      'the query failed',
    ]);
  });

  it('cuts the connection and rejects when a stream fails after its first chunk', async () => {
    async function* failing(): AsyncGenerator<string> {
      yield 'a,b\n';
      await Promise.resolve();
      throw new Error('the engine failed');
    }
    const got = await exchange((response) =>
      sendReply(new HttpReply(200, { 'Content-Type': 'text/csv' }, failing()), response),
    );
    expect(got.cut).toBe(true);
    expect(got.sent).toBe('the engine failed');
  });
  it('stops the producer when the client goes away', async () => {
    let stopped!: () => void;
    const stop = new Promise<void>((resolve) => (stopped = resolve));
    async function* endless(): AsyncGenerator<string> {
      try {
        for (;;) {
          await new Promise((resolve) => setImmediate(resolve));
          yield 'row\n';
        }
      } finally {
        stopped();
      }
    }
    const server = createServer((_request, response) => {
      void sendReply(new HttpReply(200, {}, endless()), response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const client = get({ host: '127.0.0.1', port, path: '/' }, (response) => {
        response.once('data', () => client.destroy());
      });
      client.on('error', () => undefined);
      // Resolves only if the writer ends the producer (its finally block), else the spec times out.
      await stop;
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('replyOf', () => {
  it("answers other results as Express' res.send does", () => {
    const reply = new HttpReply(304, {}, null);
    expect(replyOf(reply, 200)).toBe(reply);
    expect(replyOf(undefined, 204)).toEqual(new HttpReply(204, {}, null));
    expect(replyOf('<p>', 200).headers).toEqual({ 'Content-Type': 'text/html; charset=utf-8' });
    expect(replyOf({ a: 1 }, 200)).toEqual(
      new HttpReply(200, { 'Content-Type': 'application/json; charset=utf-8' }, '{"a":1}'),
    );
  });
});
