import { type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  COMPRESS_MIN_BYTES,
  baseEtag,
  codedEtag,
  CHOSEN_MAX,
  codingOf,
  compressible,
  etagMatches,
  remembered,
} from '@/http/reply/content-coding';
import { compressions } from '@/metrics/compressions';
import { HttpReply, KeptBody, sendReply } from '@/http/reply/http-reply';

describe('codingOf (Accept-Encoding, RFC 9110 §12.5.3)', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['gzip', 'gzip'],
    ['br', 'br'],
    // Equal quality: brotli, whatever the order.
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip, br', 'br'],
    // Quality values decide first.
    ['br;q=0.5, gzip', 'gzip'],
    ['gzip;q=0.8, br;q=0.9', 'br'],
    // q=0 refuses.
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', undefined],
    // identity preferred over what is offered.
    ['identity, gzip;q=0.5', undefined],
    ['identity;q=0, gzip', 'gzip'],
    // `*` stands for every coding not named.
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['deflate, zstd', undefined],
    // Refusing everything, identity included: sent plain anyway (see codingOf).
    ['*;q=0', undefined],
    ['GZIP', 'gzip'],
  ])('%j → %j', (header, coding) => {
    expect(codingOf(header)).toBe(coding);
  });
});

describe('the codings remembered by header', () => {
  it('stay within their bound when a client invents headers, and still answer right', () => {
    for (let i = 0; i < CHOSEN_MAX * 3; i++) {
      expect(codingOf(`gzip;q=0.${(i % 9) + 1}, x-${i}`)).toBe('gzip');
      expect(remembered()).toBeLessThanOrEqual(CHOSEN_MAX);
    }
    expect(codingOf('br;q=0, gzip')).toBe('gzip');
  });
});

describe('compressible', () => {
  it.each([
    ['application/json; charset=utf-8', true],
    ['text/csv; charset=utf-8', true],
    ['application/x-ndjson', true],
    ['text/html; charset=utf-8', true],
    ['application/javascript; charset=utf-8', true],
    ['application/problem+json', true],
    ['image/png', false],
    ['application/vnd.apache.parquet', false],
    ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', false],
    ['application/vnd.apache.arrow.stream', false],
    ['application/octet-stream', false],
    [undefined, false],
  ])('%s: %s', (type, expected) => {
    expect(compressible(type)).toBe(expected);
  });
});

describe('ETags of compressed variants', () => {
  it('add the coding inside the quotes and match any variant of the plain tag', () => {
    expect(codedEtag('"abc"', 'br')).toBe('"abc-br"');
    expect(codedEtag('W/"abc"', 'gzip')).toBe('W/"abc-gzip"');
    expect(baseEtag(' W/"abc-br"')).toBe('"abc"');
    for (const held of ['"abc"', '"abc-br"', '"abc-gzip"', 'W/"abc-br"', '"x", "abc-gzip"', '*']) {
      expect(etagMatches(held, '"abc"')).toBe(true);
    }
    expect(etagMatches('"abd-br"', '"abc"')).toBe(false);
    expect(etagMatches('"abc-zstd"', '"abc"')).toBe(false);
    expect(etagMatches(undefined, '"abc"')).toBe(false);
  });
});

interface Got {
  status: number;
  headers: IncomingMessage['headers'];
  bytes: Buffer;
}

/** Serves one request with `serve`; what the client got, as raw bytes (no decoding). */
async function exchange(
  headers: Record<string, string>,
  serve: (response: ServerResponse) => Promise<void> | undefined,
): Promise<Got> {
  const server = createServer((_request, response) => void serve(response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise<Got>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/', headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            bytes: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      })
        .on('error', reject)
        .end();
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

function decoded(got: Got): string {
  const coding = got.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(got.bytes).toString();
  if (coding === 'gzip') return gunzipSync(got.bytes).toString();
  expect(coding).toBeUndefined();
  return got.bytes.toString();
}

const JSON_TYPE = { 'Content-Type': 'application/json; charset=utf-8' };
const big = JSON.stringify(
  Array.from({ length: 200 }, (_, i) => ({ month: `2024-${i % 12}`, amount: i * 3.17 })),
);

describe('sendReply compresses', () => {
  it.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip;q=0, identity', undefined],
    ['identity', undefined],
  ])('a body in hand for %j as %j, decoding to the same bytes', async (accept, coding) => {
    const got = await exchange({ 'Accept-Encoding': accept }, (response) =>
      sendReply(new HttpReply(200, { ...JSON_TYPE, ETag: '"t"' }, big), response),
    );
    expect(got.headers['content-encoding']).toBe(coding);
    expect(got.headers.vary).toBe('Accept-Encoding');
    expect(got.headers.etag).toBe(coding ? `"t-${coding}"` : '"t"');
    expect(Number(got.headers['content-length'])).toBe(got.bytes.length);
    expect(decoded(got)).toBe(big);
    if (coding) expect(got.bytes.length).toBeLessThan(big.length / 3);
  });

  it('leaves a body under the threshold plain, and a type already compressed', async () => {
    const small = 'x'.repeat(COMPRESS_MIN_BYTES - 1);
    const plain = await exchange({ 'Accept-Encoding': 'br' }, (response) =>
      sendReply(new HttpReply(200, JSON_TYPE, small), response),
    );
    expect([plain.headers['content-encoding'], plain.headers.vary]).toEqual([
      undefined,
      'Accept-Encoding',
    ]);
    expect(plain.bytes.toString()).toBe(small);
    const png = Buffer.alloc(50_000, 7);
    const image = await exchange({ 'Accept-Encoding': 'br' }, (response) =>
      sendReply(new HttpReply(200, { 'Content-Type': 'image/png' }, png), response),
    );
    expect([image.headers['content-encoding'], image.headers.vary]).toEqual([undefined, undefined]);
    expect(image.bytes.equals(png)).toBe(true);
  });

  it('keeps Vary as set and adds to it', async () => {
    const got = await exchange({ 'Accept-Encoding': 'gzip' }, (response) => {
      response.setHeader('Vary', 'Origin');
      return sendReply(new HttpReply(200, JSON_TYPE, big), response);
    });
    expect(got.headers.vary).toBe('Origin, Accept-Encoding');
  });

  it('makes a kept body’s compressed form once, then sends it as kept with no compression', async () => {
    const kept: { body: string; encoded?: Record<string, Buffer> } = { body: big };
    let grew = 0;
    const first = await exchange({ 'Accept-Encoding': 'br' }, (response) =>
      sendReply(new HttpReply(200, JSON_TYPE, new KeptBody(kept, 'body', () => grew++)), response),
    );
    expect(decoded(first)).toBe(big);
    expect(grew).toBe(1);
    expect(kept.encoded?.br?.equals(first.bytes)).toBe(true);
    // What is kept is what is sent: a marker in place of the brotli bytes comes back as it is, so the
    // writer compressed nothing (and answered at once, with no promise).
    const marker = Buffer.from('kept bytes, not compressed again');
    kept.encoded = { ...kept.encoded, br: marker };
    let returned: unknown = 'unset';
    const again = await exchange({ 'Accept-Encoding': 'br' }, (response) => {
      returned = sendReply(new HttpReply(200, JSON_TYPE, new KeptBody(kept)), response);
      return undefined;
    });
    expect(returned).toBeUndefined();
    expect(again.bytes.equals(marker)).toBe(true);
    expect(grew).toBe(1);
  });

  it('makes a kept body’s form by one compression for requests that ask together', async () => {
    const kept: { body: string; encoded?: Record<string, Buffer> } = { body: big.repeat(20) };
    let grew = 0;
    const server = createServer((_request, response) => {
      void sendReply(
        new HttpReply(200, JSON_TYPE, new KeptBody(kept, 'asset', () => grew++)),
        response,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const before = compressions.get('gzip:asset') ?? 0;
    try {
      const bodies = await Promise.all(
        Array.from(
          { length: 6 },
          () =>
            new Promise<Buffer>((resolve, reject) => {
              request(
                { host: '127.0.0.1', port, headers: { 'Accept-Encoding': 'gzip' } },
                (got) => {
                  const chunks: Buffer[] = [];
                  got.on('data', (chunk: Buffer) => chunks.push(chunk));
                  got.on('end', () => resolve(Buffer.concat(chunks)));
                },
              )
                .on('error', reject)
                .end();
            }),
        ),
      );
      expect(bodies.every((bytes) => gunzipSync(bytes).toString() === kept.body)).toBe(true);
      expect((compressions.get('gzip:asset') ?? 0) - before).toBe(1);
      expect(grew).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a 304 confirms the variant the client holds', async () => {
    const got = await exchange({ 'Accept-Encoding': 'br', 'If-None-Match': '"t-br"' }, (response) =>
      sendReply(new HttpReply(304, { ETag: '"t"' }, null), response),
    );
    expect([got.status, got.headers.etag]).toEqual([304, '"t-br"']);
  });

  it.each(['br', 'gzip'])(
    'a stream as %s with back-pressure, decoding to the same bytes',
    async (coding) => {
      const row = 'id,month,amount,region\n' + '42,2024-05,1234.56,north\n'.repeat(40);
      let produced = 0;
      function* rows(): Generator<string> {
        for (; produced < 2000; produced++) yield row;
      }
      const got = await exchange({ 'Accept-Encoding': coding }, (response) =>
        sendReply(
          new HttpReply(200, { 'Content-Type': 'text/csv; charset=utf-8', ETag: '"s"' }, rows()),
          response,
        ),
      );
      expect(got.headers['content-encoding']).toBe(coding);
      expect(got.headers['content-length']).toBeUndefined();
      expect(got.headers.etag).toBe(`"s-${coding}"`);
      expect(decoded(got)).toBe(row.repeat(2000));
    },
  );

  it('a stream pauses its producer while the client reads nothing', async () => {
    let produced = 0;
    const chunk = Buffer.alloc(64 * 1024);
    // Random bytes do not compress: what is produced reaches the socket's buffers as it is.
    for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 2654435761) >>> 24;
    function* endless(): Generator<Buffer> {
      for (;;) {
        produced++;
        yield chunk;
      }
    }
    const server = createServer((_request, response) => {
      void sendReply(new HttpReply(200, { 'Content-Type': 'text/plain' }, endless()), response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const client = request({ host: '127.0.0.1', port, headers: { 'Accept-Encoding': 'gzip' } });
      client.on('error', () => undefined);
      const response = await new Promise<IncomingMessage>((resolve) => {
        client.on('response', resolve);
        client.end();
      });
      response.pause();
      expect(response.headers['content-encoding']).toBe('gzip');
      // Paused: the producer waits on zlib, which waits on the socket; a few MB at most are buffered.
      // Waits until the count holds still for three looks in a row (a loaded machine fills the buffers
      // more slowly), or until it passes the bound, which an unpaused producer does within a second.
      const bound = (32 * 1024 * 1024) / chunk.length;
      let still = 0;
      for (let seen = produced; still < 3 && produced < bound; seen = produced) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        still = produced === seen ? still + 1 : 0;
      }
      expect(produced).toBeLessThan(bound);
      const stalled = produced;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(produced).toBe(stalled);
      client.destroy();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
