import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Socket, connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LINGER_BYTES, LINGER_MS } from '@/http/input/lingering-close';
import { P } from './support/api';
import { http } from './support/http';
import { TempDir, tempDir } from './support/services';
import { TestServer, startServer } from './support/server';

const run = promisify(execFile);

/** The body of issue 37's report: 32 MB, 32 times the limit. */
const BIG = 32 * 1024 * 1024;
const BOUNDARY = 'drey-refusal';

/** A body of `bytes` bytes of each kind the service parses, and its content type. */
const KINDS = {
  json: {
    type: 'application/json',
    body: (bytes: number) => Buffer.from(`{"username":"${'a'.repeat(bytes - 16)}"}`),
  },
  form: {
    type: 'application/x-www-form-urlencoded',
    body: (bytes: number) => Buffer.from(`username=${'a'.repeat(bytes - 9)}`),
  },
  multipart: {
    type: `multipart/form-data; boundary=${BOUNDARY}`,
    // One field: past the field size (4 KB) it is refused with 413 as a body past the limit is.
    body: (bytes: number) =>
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="username"\r\n\r\n` +
          `${'a'.repeat(bytes - 120)}\r\n--${BOUNDARY}--\r\n`,
      ),
  },
} as const;

/** A stream of `body` in 64 KB pieces: fetch sends it chunked, without Content-Length. */
function streamed(body: Buffer): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= body.length) return controller.close();
      controller.enqueue(body.subarray(at, at + 65536));
      at += 65536;
    },
  });
}

/** What a raw client saw of its refused request: the answer's first line, and what became of its writes. */
interface RawOutcome {
  statusLine: string;
  /** Bytes the kernel took after the answer arrived, until a write failed. */
  writtenAfterAnswer: number;
  /** From the answer to the first failed write (the server closed): ms. */
  closedAfterMs: number;
}

/**
 * An attacker's client: sends `head`, then writes `piece` every `everyMs` (0: as fast as the kernel takes
 * it) for ever, never reading past the answer's first line, until the server's close makes a write fail.
 */
function keepWriting(port: number, head: string, piece: Buffer, everyMs: number) {
  return new Promise<RawOutcome>((resolve, reject) => {
    // Half-open: the server's FIN after its answer does not end this side's writes.
    const socket: Socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let answeredAt = 0;
    let afterAnswer = 0;
    let timer: NodeJS.Timeout | undefined;
    const failed = () => {
      clearTimeout(timer);
      if (!answeredAt) return reject(new Error(`closed before any answer: ${answer}`));
      resolve({
        statusLine: answer.split('\r\n', 1)[0],
        writtenAfterAnswer: afterAnswer,
        closedAfterMs: Date.now() - answeredAt,
      });
    };
    socket.on('error', failed);
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (!answeredAt) answeredAt = Date.now();
    });
    const write = (): void => {
      if (socket.destroyed) return;
      const accepted = socket.write(piece, (error) => error && failed());
      if (answeredAt) afterAnswer += piece.length;
      if (everyMs > 0) timer = setTimeout(write, everyMs);
      else if (accepted) setImmediate(write);
      else socket.once('drain', write);
    };
    socket.write(head);
    write();
  });
}

/**
 * A body refused before it is read is answered, then the connection closes lingeringly
 * (src/http/input/lingering-close.ts): clients that are still sending read their 413 instead of a reset,
 * whatever they are (Node's fetch, curl, Python) and whatever the body (JSON, form, multipart, with or
 * without Content-Length); and a client that keeps sending is cut within the bounds.
 */
describe('a refused body', () => {
  let t: TestServer;
  let dir: TempDir;
  let bigFile: string;

  beforeAll(async () => {
    t = await startServer();
    dir = tempDir('drey-refusal-');
    bigFile = join(dir.path, 'big.json');
    writeFileSync(bigFile, KINDS.json.body(BIG));
  });
  afterAll(async () => {
    dir?.remove();
    await t?.close();
  });

  const login = () => `${t.url}${P}/login`;

  it("answers 20 of 20 oversized JSON bodies sent at once by Node's fetch with 413", async () => {
    const body = KINDS.json.body(BIG);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, async () => {
        try {
          const reply = await fetch(login(), {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body,
          });
          const parsed = (await reply.json()) as { error?: string };
          return `${reply.status} ${parsed.error} ${reply.headers.get('connection')}`;
        } catch (error) {
          return String((error as { cause?: unknown }).cause ?? error);
        }
      }),
    );
    expect(statuses).toEqual(Array(20).fill('413 payload_too_large close'));
  });

  it.each(Object.keys(KINDS) as (keyof typeof KINDS)[])(
    'answers 413 to a %s body with Content-Length and chunked, and keeps serving',
    async (kind) => {
      const { type, body } = KINDS[kind];
      const big = body(BIG);
      for (const [how, sent] of [
        ['length', big],
        ['chunked', () => streamed(big)],
      ] as const) {
        const reply = await fetch(login(), {
          method: 'POST',
          headers: { 'Content-Type': type },
          body: typeof sent === 'function' ? sent() : sent,
          duplex: 'half',
        });
        const parsed = (await reply.json()) as { error?: string };
        expect([how, reply.status, parsed.error]).toEqual([how, 413, 'payload_too_large']);
      }
      // A body within the limit is still read and answered on a kept-alive connection.
      const small = await http(login(), {
        method: 'POST',
        headers: { 'Content-Type': type },
        body: body(2000),
      });
      expect(small.status).not.toBe(413);
    },
  );

  it('answers 413 to curl, with Content-Length and chunked', async () => {
    for (const extra of [[], ['-H', 'Transfer-Encoding: chunked']]) {
      const { stdout } = await run('curl', [
        '-sS',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '-H',
        'Content-Type: application/json',
        ...extra,
        '--data-binary',
        `@${bigFile}`,
        login(),
      ]);
      expect([extra.join(' '), stdout]).toEqual([extra.join(' '), '413']);
    }
  });

  it("answers 413 to Python's http.client and urllib, which send the whole body before reading", async () => {
    const script = `
import http.client, sys, urllib.error, urllib.request
from urllib.parse import urlsplit
url, path = sys.argv[1], sys.argv[2]
body = open(path, 'rb').read()
parts = urlsplit(url)
connection = http.client.HTTPConnection(parts.hostname, parts.port)
connection.request('POST', parts.path, body=body, headers={'Content-Type': 'application/json'})
print(connection.getresponse().status)
try:
    urllib.request.urlopen(urllib.request.Request(url, data=body, headers={'Content-Type': 'application/json'}))
    print('accepted')
except urllib.error.HTTPError as error:
    print(error.code)
`;
    const { stdout } = await run('python3', ['-c', script, login(), bigFile]);
    expect(stdout.trim().split('\n')).toEqual(['413', '413']);
  });

  it(`cuts a client that keeps sending after the 413 once it has sent ${LINGER_BYTES} more bytes`, async () => {
    const port = Number(new URL(t.url).port);
    const outcome = await keepWriting(
      port,
      `POST ${P}/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${1024 ** 4}\r\n\r\n`,
      Buffer.alloc(65536, 'a'),
      0,
    );
    expect(outcome.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
    // Socket buffers on both sides hold a few MB beyond what the server read.
    expect(outcome.writtenAfterAnswer).toBeGreaterThan(LINGER_BYTES / 2);
    expect(outcome.writtenAfterAnswer).toBeLessThan(LINGER_BYTES + 16 * 1024 * 1024);
    expect(outcome.closedAfterMs).toBeLessThan(LINGER_MS);
  });

  it(`cuts a client that sends slowly after the 413, chunked or not, ${LINGER_MS} ms after the answer`, async () => {
    const port = Number(new URL(t.url).port);
    const head = `POST ${P}/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`;
    const chunk = (text: string) => Buffer.from(`${text.length.toString(16)}\r\n${text}\r\n`);
    const outcomes = await Promise.all([
      keepWriting(
        port,
        `${head}Content-Length: 10000000\r\n\r\n`,
        Buffer.from('a'.repeat(100)),
        50,
      ),
      // Over the limit at once, then a chunk every 50 ms.
      keepWriting(
        port,
        `${head}Transfer-Encoding: chunked\r\n\r\n${chunk('a'.repeat(1024 * 1024 + 1)).toString()}`,
        chunk('a'.repeat(100)),
        50,
      ),
    ]);
    for (const outcome of outcomes) {
      expect(outcome.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
      expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(LINGER_MS - 100);
      expect(outcome.closedAfterMs).toBeLessThan(LINGER_MS + 1000);
    }
    expect((await http(`${t.url}/health/live`)).status).toBe(200);
  });
});
