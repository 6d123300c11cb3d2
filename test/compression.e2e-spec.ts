import { readFileSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Api, L, P } from './support/api';
import { counter } from './support/observe';
import { REPO_ROOT, TestServer, startServer } from './support/server';

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as sent, before any decoding. */
  bytes: Buffer;
  /** The body decoded by its Content-Encoding. */
  text: string;
}

/** A GET with node:http, which (unlike fetch) neither asks for nor decodes a coding by itself. */
function raw(url: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const coding = response.headers['content-encoding'];
        const plain =
          coding === 'br'
            ? brotliDecompressSync(bytes)
            : coding === 'gzip'
              ? gunzipSync(bytes)
              : bytes;
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          bytes,
          text: plain.toString(),
        });
      });
    })
      .on('error', reject)
      .end();
  });
}

const compressions = (url: string, coding: string, effort: string) =>
  counter(url, 'drey_compressions_total', `coding="${coding}",effort="${effort}"`);

describe('compressed responses (Accept-Encoding: br, gzip)', () => {
  let t: TestServer;
  let admin: string;
  const auth = () => ({ Authorization: `Bearer ${admin}` });

  beforeAll(async () => {
    t = await startServer({ METRICS_PUBLIC: 'true' });
    admin = await new Api(t.url).adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  // Every transaction: several KB of JSON, in both layouts.
  const current = `${P}/datasets/expense_transactions/results`;
  const legacy = `${L}/dataset/expense-transactions`;

  it.each([current, legacy])(
    'a JSON result at %s: br and gzip decode to the plain body, identity and q=0 are honoured',
    async (path) => {
      const url = `${t.url}${path}`;
      const plain = await raw(url, auth());
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toContain('Accept-Encoding');
      expect(plain.bytes.length).toBeGreaterThan(4096);
      for (const [accept, coding] of [
        ['gzip, deflate, br, zstd', 'br'],
        ['br;q=0.5, gzip', 'gzip'],
        ['gzip;q=0, br;q=0', undefined],
        ['identity, br;q=0.9', undefined],
        ['identity;q=0, gzip', 'gzip'],
      ] as const) {
        const got = await raw(url, { ...auth(), 'Accept-Encoding': accept });
        expect({ accept, coding: got.headers['content-encoding'] }).toEqual({ accept, coding });
        expect(got.text).toBe(plain.text);
        expect(got.headers.vary).toContain('Accept-Encoding');
        expect(Number(got.headers['content-length'])).toBe(got.bytes.length);
        if (coding) {
          expect(got.bytes.length).toBeLessThan(plain.bytes.length / 3);
          expect(got.headers.etag).toBe(`${plain.headers.etag?.slice(0, -1)}-${coding}"`);
        }
      }
    },
  );

  it('If-None-Match of any variant gets a 304 that confirms the variant held', async () => {
    const url = `${t.url}${current}`;
    const br = await raw(url, { ...auth(), 'Accept-Encoding': 'br' });
    const held = br.headers.etag ?? '';
    expect(held).toMatch(/-br"$/);
    const again = await raw(url, { ...auth(), 'Accept-Encoding': 'br', 'If-None-Match': held });
    expect([again.status, again.headers.etag, again.bytes.length]).toEqual([304, held, 0]);
    expect(again.headers.vary).toContain('Accept-Encoding');
    const plainTag = held.replace(/-br"$/, '"');
    const plain = await raw(url, { ...auth(), 'If-None-Match': plainTag });
    expect([plain.status, plain.headers.etag]).toEqual([304, plainTag]);
  });

  it('leaves a small body plain', async () => {
    const got = await raw(`${t.url}${P}/datasets/expenses_by_month/results?x_limit=1`, {
      'Accept-Encoding': 'br, gzip',
    });
    expect(got.status).toBe(200);
    expect(got.bytes.length).toBeLessThan(1024);
    expect(got.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(got.text).data).toHaveLength(1);
  });

  it('compresses a cached page once: its repeated compressed reads send what was kept', async () => {
    // A page of its own (x_limit), so that no earlier test has made its forms.
    const url = `${t.url}${current}?x_limit=97`;
    const before = await compressions(t.url, 'br', 'body');
    const first = await raw(url, { ...auth(), 'Accept-Encoding': 'br' });
    expect(first.headers['content-encoding']).toBe('br');
    expect(await compressions(t.url, 'br', 'body')).toBe(before + 1);
    for (let i = 0; i < 5; i++) {
      const again = await raw(url, { ...auth(), 'Accept-Encoding': 'br' });
      expect(again.bytes.equals(first.bytes)).toBe(true);
    }
    expect(await compressions(t.url, 'br', 'body')).toBe(before + 1);
    // gzip is made once too, beside it.
    await raw(url, { ...auth(), 'Accept-Encoding': 'gzip' });
    await raw(url, { ...auth(), 'Accept-Encoding': 'gzip' });
    expect(await compressions(t.url, 'gzip', 'body')).toBeGreaterThanOrEqual(1);
    expect(await compressions(t.url, 'br', 'body')).toBe(before + 1);
  });

  it.each([current, legacy])(
    'an export of %s streamed compressed decodes to the same CSV',
    async (path) => {
      const url = `${t.url}${path}?x_format=csv`;
      const plain = await raw(url, auth());
      expect(plain.headers['content-type']).toBe('text/csv; charset=utf-8');
      for (const coding of ['br', 'gzip']) {
        const before = await compressions(t.url, coding, 'stream');
        const got = await raw(url, { ...auth(), 'Accept-Encoding': coding });
        expect(got.headers['content-encoding']).toBe(coding);
        expect(got.headers['transfer-encoding']).toBe('chunked');
        expect(got.headers['content-disposition']).toBe(plain.headers['content-disposition']);
        expect(got.text).toBe(plain.text);
        expect(await compressions(t.url, coding, 'stream')).toBe(before + 1);
      }
    },
  );

  it.each([
    ['/docs/swagger-ui-bundle.js', 'application/javascript'],
    [`${P}/docs/swagger-ui.css`, 'text/css'],
    ['/redoc/redoc.standalone.js', 'application/javascript'],
  ])('the documentation asset %s is compressed once per process', async (path, type) => {
    const url = `${t.url}${path}`;
    const plain = await raw(url, {});
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toContain(type);
    if (path.includes('swagger-ui-bundle')) {
      const file = join(REPO_ROOT, 'node_modules', 'swagger-ui-dist', 'swagger-ui-bundle.js');
      expect(plain.bytes.equals(readFileSync(file))).toBe(true);
    }
    const before = await compressions(t.url, 'br', 'asset');
    const br = await raw(url, { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.text).toBe(plain.text);
    expect(br.bytes.length).toBeLessThan(plain.bytes.length / 3);
    const again = await raw(url, { 'Accept-Encoding': 'br' });
    expect(again.bytes.equals(br.bytes)).toBe(true);
    expect(await compressions(t.url, 'br', 'asset')).toBe(before + 1);
    const gzip = await raw(url, { 'Accept-Encoding': 'gzip' });
    expect(gzip.text).toBe(plain.text);
    // Revalidation, for any variant.
    const fresh = await raw(url, {
      'Accept-Encoding': 'br',
      'If-None-Match': br.headers.etag ?? '',
    });
    expect([fresh.status, fresh.headers.etag]).toEqual([304, br.headers.etag]);
  });

  it.each([
    ['/docs/swagger-ui-init.js', 'application/javascript'],
    [`${P}/docs-json`, 'application/json'],
  ])('%s, which @nestjs/swagger writes itself, is compressed once too', async (path, type) => {
    const url = `${t.url}${path}`;
    const plain = await raw(url, {});
    expect([plain.status, plain.headers['content-encoding']]).toEqual([200, undefined]);
    expect(plain.headers['content-type']).toContain(type);
    expect(plain.bytes.length).toBeGreaterThan(50_000);
    const before = await compressions(t.url, 'gzip', 'asset');
    for (let i = 0; i < 3; i++) {
      const gzip = await raw(url, { 'Accept-Encoding': 'gzip' });
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(gzip.headers['content-type']).toContain(type);
      expect(gzip.text).toBe(plain.text);
      expect(gzip.bytes.length).toBeLessThan(plain.bytes.length / 4);
    }
    expect(await compressions(t.url, 'gzip', 'asset')).toBe(before + 1);
  });

  it("a handler's plain JSON (the catalog) on Nest's path is compressed by the same writer", async () => {
    const url = `${t.url}${P}/data-catalog`;
    const plain = await raw(url, auth());
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(plain.bytes.length).toBeGreaterThan(1024);
    const br = await raw(url, { ...auth(), 'Accept-Encoding': 'br' });
    expect([br.headers['content-encoding'], br.headers.vary]).toEqual(['br', 'Accept-Encoding']);
    expect(br.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(br.text)).toEqual(JSON.parse(plain.text));
  });
});
