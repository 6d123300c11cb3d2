import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Api, P } from './support/api';
import { markdownBlocks } from './support/doc-walkthrough';
import { REPO_ROOT, TestServer, startServer } from './support/server';

const OPERATIONS = join(REPO_ROOT, 'docs', 'operations.md');
const SECRET = `whsec_${Buffer.from('the secret of docs-webhooks spec').toString('base64')}`;

/** The `js` blocks of the section "Build notifications" of docs/operations.md. */
function receiverBlocks(): string[] {
  return markdownBlocks(OPERATIONS)
    .filter((block) => block.lang === 'js')
    .filter((block) => block.lines.join('\n').includes('webhook') || block.before.includes('HMAC'))
    .map((block) => block.lines.join('\n'));
}

/**
 * Runs a block of the page as a receiver would, with `rawBody`, `request.headers`, `process.env` and
 * `require` in scope, and answers the value of `name` once it ran (or the error it threw).
 */
function runBlock(
  code: string,
  name: string,
  rawBody: string,
  headers: IncomingHttpHeaders,
  secret: string,
): unknown {
  // The page's code, as a reader pastes it into their handler; only its scope is this test's.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const run = new Function('require', 'process', 'rawBody', 'request', `${code}\nreturn ${name};`);
  try {
    return run(require, { env: { WEBHOOK_SECRET: secret } }, rawBody, { headers }) as unknown;
  } catch (error) {
    return error;
  }
}

/**
 * docs/operations.md says how a receiver checks a build notification's signature (issue 40: it said the HMAC
 * is keyed with WEBHOOK_SECRET, while it is keyed with the bytes after `whsec_`). Both of its blocks, the
 * library's and the one by hand, run on an event a real server sent, and accept it; the one by hand refuses
 * a forged body and another secret.
 */
describe('docs/operations.md, build notifications', () => {
  let receiver: Server;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  let t: TestServer;

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.statusCode = 204;
        response.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    t = await startServer({ WEBHOOK_URLS: url, WEBHOOK_SECRET: SECRET });
  });
  afterAll(async () => {
    await t?.close();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it("checks a real event with the page's blocks, keyed with the decoded part after whsec_", async () => {
    const api = new Api(t.url);
    const admin = await api.adminToken();
    expect((await api.request('POST', `${P}/build`, { token: admin })).status).toBe(200);
    const deadline = Date.now() + 20_000;
    while (received.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [event] = received;
    expect(event).toBeDefined();

    const [library, byHand] = receiverBlocks();
    expect(library).toContain("require('standardwebhooks')");
    expect(byHand).toContain("require('node:crypto')");
    const verified = runBlock(library, 'event', event.body, event.headers, SECRET) as {
      type?: string;
    };
    expect(verified.type).toBe('build.succeeded');

    expect(runBlock(byHand, 'valid', event.body, event.headers, SECRET)).toBe(true);
    const forged = event.body.replace('succeeded', 'failed');
    expect(runBlock(byHand, 'valid', forged, event.headers, SECRET)).toBe(false);
    const other = `whsec_${Buffer.from('another secret, thirty-two bytes').toString('base64')}`;
    expect(runBlock(byHand, 'valid', event.body, event.headers, other)).toBe(false);

    // What the page said before: the text of WEBHOOK_SECRET as the key. It is not the key.
    const { createHmac } = await import('node:crypto');
    const id = String(event.headers['webhook-id']);
    const timestamp = String(event.headers['webhook-timestamp']);
    const withText = createHmac('sha256', SECRET)
      .update(`${id}.${timestamp}.${event.body}`)
      .digest('base64');
    expect(String(event.headers['webhook-signature']).split(' ')).not.toContain(`v1,${withText}`);
  });
});
