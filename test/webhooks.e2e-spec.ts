import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { Api, P } from './support/api';
import { EXAMPLE_PROJECT, TestServer, startServer } from './support/server';

const SECRET = `whsec_${Buffer.from('a shared secret of thirty-two b.').toString('base64')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A webhook receiver on 127.0.0.1: `/flaky` fails its first two calls, `/down` always answers 503, `/hang`
 * never answers. Every call is kept, with its headers and body, to check signatures and back-off.
 */
class Receiver {
  readonly calls: Received[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const path = (request.url ?? '').split('?')[0];
        this.calls.push({ path, headers: request.headers, body, at: Date.now() });
        const id = (JSON.parse(body) as { data: { id: string } }).data.id;
        const earlier = this.of(path, id).length;
        if (path === '/hang') return;
        response.statusCode = path === '/down' || earlier <= 2 ? 503 : 204;
        response.end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The calls to `path` about one build (the first build's events may still be retried meanwhile). */
  of(path: string, buildId: string): Received[] {
    return this.calls.filter(
      (call) =>
        call.path === path &&
        (JSON.parse(call.body) as { data: { id: string } }).data.id === buildId,
    );
  }

  async until(test: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test()) {
      if (Date.now() > deadline) throw new Error('the receiver did not get what was expected');
      await sleep(50);
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

interface Notification {
  event: string;
  event_id: string;
  endpoint: number;
  origin: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
}

describe.each([
  ['on Redis (BullMQ retries them)', {}],
  ['without Redis (timers retry them)', { REDIS_URL: undefined }],
])('build notifications %s', (_name, env) => {
  const receiver = new Receiver();
  let t: TestServer;
  let api: Api;
  let admin: string;
  let project: string;

  beforeAll(async () => {
    await receiver.start();
    project = mkdtempSync(join(tmpdir(), 'drey-webhooks-project-'));
    cpSync(EXAMPLE_PROJECT, project, { recursive: true });
    t = await startServer({
      ...env,
      PROJECT_DIR: project,
      WEBHOOK_URLS: ['/flaky', '/down?token=kept-out-of-the-history', '/hang']
        .map((path) => receiver.url + path)
        .join(','),
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_MAX_ATTEMPTS: '3',
      WEBHOOK_RETRY_BASE_MS: '300',
      WEBHOOK_TIMEOUT_MS: '1500',
    });
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
    rmSync(project, { recursive: true, force: true });
  });

  const history = async () =>
    (await api.get(`${P}/builds`, admin)).body as {
      id: string;
      status: string;
      error: string | null;
      notifications: Notification[];
    }[];

  it('says at start-up which receivers are configured, without their paths', () => {
    const line = t.server.logs.find((entry) => entry.msg === 'webhooks configured');
    const origin = new URL(receiver.url).origin;
    expect(line).toMatchObject({
      level: 'info',
      endpoints: [origin, origin, origin],
      events: ['build.succeeded', 'build.failed'],
    });
    expect(JSON.stringify(t.server.logs)).not.toContain('kept-out-of-the-history');
  });

  it('sends a signed event to every webhook, retries with back-off, and never holds the build', async () => {
    const reply = await api.request('POST', `${P}/build`, { token: admin });
    expect(reply.status).toBe(200);
    // The build answered while the endpoint that never answers still had every attempt to come.
    const [build] = await history();
    expect(build.status).toBe('succeeded');
    const hanging = build.notifications.find((n) => n.endpoint === 3);
    expect(hanging?.status).toBe('pending');

    await receiver.until(
      () =>
        receiver.of('/flaky', build.id).length === 3 && receiver.of('/down', build.id).length === 3,
    );
    const verifier = new Webhook(SECRET);
    const ids = new Set<string>();
    const calls = ['/flaky', '/down', '/hang'].flatMap((path) => receiver.of(path, build.id));
    for (const call of calls) {
      // The Standard Webhooks reference library accepts the signature (and refuses it with another key).
      const event = verifier.verify(call.body, call.headers as Record<string, string>) as {
        type: string;
        data: { id: string; status: string; project: string; trigger: string };
      };
      expect(event.type).toBe('build.succeeded');
      expect(event.data).toMatchObject({
        id: build.id,
        status: 'succeeded',
        project: 'expenses v1',
        trigger: 'request',
      });
      expect(() =>
        new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(
          call.body,
          call.headers as Record<string, string>,
        ),
      ).toThrow();
      ids.add(String(call.headers['webhook-id']));
    }
    // One event: the same id on every endpoint and every attempt.
    expect(ids.size).toBe(1);
    // Back-off: 300 ms before the second attempt, 600 before the third.
    const flaky = receiver.of('/flaky', build.id).map((call) => call.at);
    expect(flaky[1] - flaky[0]).toBeGreaterThanOrEqual(250);
    expect(flaky[2] - flaky[1]).toBeGreaterThanOrEqual(550);

    // Administrators read each delivery in the history: the endpoint's origin only, never its path.
    const deadline = Date.now() + 15_000;
    let notifications: Notification[] = [];
    while (Date.now() < deadline) {
      notifications = (await history()).find((b) => b.id === build.id)?.notifications ?? [];
      if (notifications.every((n) => n.status !== 'pending')) break;
      await sleep(200);
    }
    expect(notifications).toHaveLength(3);
    expect(notifications[0]).toMatchObject({
      event: 'build.succeeded',
      endpoint: 1,
      origin: receiver.url,
      status: 'delivered',
      attempts: 3,
      last_status_code: 204,
      last_error: null,
    });
    expect(notifications[1]).toMatchObject({
      endpoint: 2,
      status: 'failed',
      attempts: 3,
      last_status_code: 503,
      last_error: 'answered 503',
    });
    expect(notifications[2]).toMatchObject({
      endpoint: 3,
      status: 'failed',
      attempts: 3,
      last_status_code: null,
      last_error: 'no answer within 1500 ms',
    });
    expect(JSON.stringify(notifications)).not.toContain('kept-out-of-the-history');
    const metrics = (await api.get('/metrics', admin)).text;
    expect(metrics).toMatch(/drey_webhook_attempts_total\{outcome="delivered"\} [1-9]/);
    expect(metrics).toMatch(/drey_webhook_attempts_total\{outcome="failed"\} [1-9]/);
  }, 60_000);

  it('sends build.failed with the error when a build fails', async () => {
    writeFileSync(join(project, 'models', 'expenses_by_month.sql'), 'SELECT FROM nowhere_at_all');
    const reply = await api.request('POST', `${P}/build`, { token: admin });
    // The project's own SQL broke it: a 400 (fix the project), not the infrastructure's 500.
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('invalid_project');
    const [failed] = await history();
    expect(failed.status).toBe('failed');
    await receiver.until(() => receiver.of('/flaky', failed.id).length >= 1);
    const call = receiver.of('/flaky', failed.id)[0];
    const event = new Webhook(SECRET).verify(call.body, call.headers as Record<string, string>) as {
      type: string;
      data: { status: string; error: string };
    };
    expect(event.type).toBe('build.failed');
    expect(event.data.status).toBe('failed');
    expect(event.data.error).toContain('expenses_by_month');
    cpSync(join(EXAMPLE_PROJECT, 'models'), join(project, 'models'), { recursive: true });
  }, 60_000);
});
