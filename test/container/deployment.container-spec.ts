import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Api, P } from '../support/api';
import { pngHeader } from '../support/png';
import { freePort } from '../support/services';

/**
 * docker-compose.yml as users run it, under Podman: Postgres, Redis, three Drey replicas that share no
 * folder, and HAProxy in front (test/container/images.sh makes the images). Everything goes through the
 * load balancer's published port, except where a replica is asked directly (with `podman exec`) what it
 * serves. Run with `npm run test:container`.
 */

const ROOT = resolve(__dirname, '../..');
const PROJECT = 'drey-ct';
const REPLICAS = ['drey-1', 'drey-2', 'drey-3'];
const secret = () => randomBytes(24).toString('base64url');
const ADMIN_PASSWORD = secret();
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

let env: NodeJS.ProcessEnv;
let workDir: string;
let api: Api;
let admin: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], timeoutMs = 120_000): Promise<Run> {
  return new Promise((done) => {
    execFile(
      command,
      args,
      { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        done({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
  });
}

async function must(command: string, args: string[], timeoutMs?: number): Promise<string> {
  const result = await run(command, args, timeoutMs);
  if (result.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.code}):\n${result.stderr.slice(-4000)}`,
    );
  }
  return result.stdout;
}

const compose = (...args: string[]) =>
  run('podman-compose', ['-p', PROJECT, '-f', join(ROOT, 'docker-compose.yml'), ...args], 600_000);
const container = (service: string) => `${PROJECT}_${service}_1`;

/** Runs a script with Node inside a replica; its stdout, trimmed. */
async function inReplica(service: string, script: string, ...args: string[]): Promise<string> {
  return (await must('podman', ['exec', container(service), 'node', '-e', script, ...args])).trim();
}

/** What a replica itself answers (not through the load balancer): status and body. */
async function direct(
  service: string,
  path: string,
  token = '',
): Promise<{ status: number; body: string }> {
  const script = `fetch('http://127.0.0.1:4465' + process.argv[1], { headers: process.argv[2] ? { authorization: 'Bearer ' + process.argv[2] } : {} })
    .then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.text() })))`;
  return JSON.parse(await inReplica(service, script, path, token)) as {
    status: number;
    body: string;
  };
}

async function servedBuild(service: string): Promise<string | undefined> {
  const ready = await direct(service, '/health/ready');
  if (ready.status !== 200) return undefined;
  return (JSON.parse(ready.body) as { checks: { environment: { build?: string } } }).checks
    .environment.build;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(250);
  }
}

async function healthy(name: string): Promise<boolean> {
  return (await run('podman', ['healthcheck', 'run', name])).code === 0;
}

beforeAll(async () => {
  env = {
    ...process.env,
    CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(__dirname, 'containers.conf'),
  };
  const images = await must('bash', [join(__dirname, 'images.sh')], 900_000);
  for (const line of images.split('\n')) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (match) env[match[1]] = match[2];
  }
  workDir = mkdtempSync(join(tmpdir(), 'drey-compose-'));
  const envFile = join(workDir, '.env');
  // As docs/deployment.md says: .env.example with the secrets set, everything else as it is.
  writeFileSync(
    envFile,
    readFileSync(join(ROOT, '.env.example'), 'utf8')
      .replace(/^JWT_SECRET=.*$/m, `JWT_SECRET=${secret()}`)
      .replace(/^ADMIN_PASSWORD=.*$/m, `ADMIN_PASSWORD=${ADMIN_PASSWORD}`),
  );
  const port = await freePort();
  Object.assign(env, {
    DREY_ENV_FILE: envFile,
    POSTGRES_PASSWORD: secret(),
    PUBLISH_PORT: String(port),
  });
  await compose('down', '-v');
  const up = await compose('up', '-d', '--no-build');
  if (up.code !== 0) throw new Error(`podman-compose up failed:\n${up.stderr.slice(-4000)}`);
  api = new Api(`http://127.0.0.1:${port}`);
  await until(
    'all three replicas ready',
    async () => (await Promise.all(REPLICAS.map(servedBuild))).every(Boolean),
    180_000,
  );
  await until(
    'the load balancer ready',
    async () => (await api.get('/health/ready')).status === 200,
    30_000,
  );
  admin = await api.login('admin', ADMIN_PASSWORD);
}, 1_200_000);

afterAll(async () => {
  // Every container's log and address, for a look after a failure (the stack is gone by then).
  const artifacts = join(
    process.env.TEST_ARTIFACTS_DIR || join(tmpdir(), 'drey-test-artifacts'),
    'containers',
  );
  mkdirSync(artifacts, { recursive: true });
  for (const service of ['postgres', 'redis', ...REPLICAS, 'lb']) {
    const logs = await run('podman', ['logs', '-t', container(service)]);
    const address = await run('podman', [
      'inspect',
      '--format',
      '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{.MacAddress}}{{end}}',
      container(service),
    ]);
    writeFileSync(
      join(artifacts, `${service}.log`),
      `# ${address.stdout.trim()}\n${logs.stdout}${logs.stderr}`,
    );
  }
  process.stdout.write(`container logs: ${artifacts}\n`);
  if (process.env.KEEP_CONTAINERS !== '1') {
    await compose('down', '-v');
    rmSync(workDir, { recursive: true, force: true });
  }
}, 300_000);

describe('docker-compose.yml under Podman: three replicas behind HAProxy', () => {
  it('every service passes its health check', async () => {
    for (const service of ['postgres', 'redis', ...REPLICAS, 'lb']) {
      expect([service, await healthy(container(service))]).toEqual([service, true]);
    }
  });

  it('the image runs as non-root on a read-only root file system, under 700 MB with Chromium', async () => {
    const image = JSON.parse(
      await must('podman', ['image', 'inspect', env.DREY_IMAGE as string]),
    ) as {
      Size: number;
    }[];
    expect(image[0].Size).toBeLessThan(700 * 1000 * 1000);
    expect(await must('podman', ['exec', container('drey-1'), 'id', '-u'])).not.toBe('0\n');
    const touched = await run('podman', ['exec', container('drey-1'), 'touch', '/app/x']);
    expect(touched.code).not.toBe(0);
    expect(touched.stderr).toMatch(/Read-only file system/);
    const mounts = await must('podman', [
      'inspect',
      '--format',
      '{{json .Mounts}}',
      ...REPLICAS.map(container),
    ]);
    // Each replica's DATA_DIR is a volume of its own.
    const volumes = mounts
      .trim()
      .split('\n')
      .map(
        (line) =>
          (JSON.parse(line) as { Destination: string; Name: string }[]).find(
            (m) => m.Destination === '/data',
          )?.Name,
      );
    expect(new Set(volumes).size).toBe(3);
  });

  it('serves login, the catalog, results and a PNG dashboard through the load balancer', async () => {
    const catalog = await api.get(`${P}/data-catalog`, admin);
    expect(catalog.status).toBe(200);
    expect(catalog.body.datasets.length).toBeGreaterThan(0);
    const results = await api.get(`${P}/datasets/expenses_by_month/results`, admin);
    expect(results.status).toBe(200);
    expect(results.body.data.length).toBeGreaterThan(0);
    const png = await fetch(`${api.url}${P}/dashboards/expenses_dashboard/results`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(pngHeader(Buffer.from(await png.arrayBuffer())).width).toBeGreaterThan(100);
  });

  it('a build requested on one replica is served by all three within 2 s of its end', async () => {
    const before = await servedBuild('drey-1');
    const built = await api.request('POST', `${P}/build`, { token: admin });
    expect(built.status).toBe(200);
    const [latest] = (await api.get(`${P}/builds`, admin)).body as {
      id: string;
      status: string;
      finished_at: string;
    }[];
    expect(latest.status).toBe('succeeded');
    expect(latest.id).not.toBe(before);
    const ended = Date.parse(latest.finished_at);
    // Each replica is watched from inside (the clocks are the machine's): when did it first serve the build?
    const watch = `const until = Date.now() + 15000;
      (async () => {
        for (;;) {
          const r = await fetch('http://127.0.0.1:4465/health/ready').then((x) => x.json(), () => ({}));
          if (r.checks?.environment?.build === process.argv[1] || Date.now() > until) return console.log(Date.now());
          await new Promise((d) => setTimeout(d, 20));
        }
      })()`;
    const seen = await Promise.all(REPLICAS.map((service) => inReplica(service, watch, latest.id)));
    for (const service of REPLICAS)
      expect([service, await servedBuild(service)]).toEqual([service, latest.id]);
    const delays = seen.map((at) => Number(at) - ended);
    expect(Math.max(...delays)).toBeLessThan(2000);
  });

  it('a token revoked through one replica is refused by all at once', async () => {
    const created = await api.request('POST', `${P}/tokens`, {
      token: admin,
      json: { title: 'revoked' },
    });
    const token = created.body.access_token as string;
    for (const service of REPLICAS)
      expect((await direct(service, `${P}/me`, token)).status).toBe(200);
    const id = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti as string;
    expect((await api.request('DELETE', `${P}/tokens/${id}`, { token: admin })).status).toBe(200);
    const after = await Promise.all(REPLICAS.map((service) => direct(service, `${P}/me`, token)));
    expect(after.map((reply) => reply.status)).toEqual([401, 401, 401]);
  });

  it('one replica stopped mid-traffic costs no request and no data; a build while it is down reaches it at start', async () => {
    const failures: string[] = [];
    const createdUsers: string[] = [];
    let stop = false;
    let served = 0;
    const reads: [string, string | undefined][] = [
      [`${P}/datasets/expenses_by_month/results`, undefined],
      [`${P}/data-catalog`, admin],
      [`${P}/me`, admin],
    ];
    const workers = Array.from({ length: 4 }, async (_, worker) => {
      for (let i = 0; !stop; i += 1) {
        if (worker === 0 && i % 4 === 0) {
          // Writes too: every user the service said it created must still be there afterwards.
          const username = `traffic_${i}`;
          const reply = await api.request('POST', `${P}/users`, {
            token: admin,
            json: { username, password: `${username}-password` },
          });
          if (reply.status === 200) createdUsers.push(username);
          else failures.push(`POST users ${reply.status} ${reply.text.slice(0, 200)}`);
          continue;
        }
        const [path, token] = reads[(worker + i) % reads.length];
        const reply = await api
          .get(path, token)
          .catch((error: Error) => ({ status: 0, text: error.message }));
        if (reply.status === 200) served += 1;
        else failures.push(`GET ${path} ${reply.status} ${reply.text.slice(0, 200)}`);
      }
    });
    try {
      await sleep(1500);
      // As `docker stop` does: SIGTERM, then SIGKILL if it is still running after the grace period.
      await must('podman', ['stop', '--time', '6', container('drey-2')]);
      await sleep(1500);
      // A build while it is down.
      expect((await api.request('POST', `${P}/build`, { token: admin })).status).toBe(200);
      await sleep(1000);
    } finally {
      // Whatever failed above, the traffic ends here: a loop left running would keep jest from exiting
      // (it retried a closed port until CI's time ran out).
      stop = true;
      await Promise.all(workers);
    }
    // It drained and exited by itself, before the SIGKILL: its own last line says so. (Not timed from
    // here: the time podman takes around the stop is not the service's.)
    const log = await run('podman', ['logs', container('drey-2')]);
    expect(`${log.stdout}${log.stderr}`).toMatch(/"msg":"stopped"/);
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(100);

    const users = (await api.get(`${P}/users`, admin)).body as { username: string }[];
    const names = new Set(users.map((user) => user.username));
    expect(createdUsers.filter((name) => !names.has(name))).toEqual([]);

    const [latest] = (await api.get(`${P}/builds`, admin)).body as { id: string }[];
    const state = (
      await must('podman', ['inspect', '--format', '{{.State.Running}}', container('drey-2')])
    ).trim();
    if (state !== 'true') await must('podman', ['start', container('drey-2')]);
    const caughtUp = await until(
      'drey-2 back with the current build',
      () => servedBuild('drey-2'),
      120_000,
    );
    expect(caughtUp).toBe(latest.id);
    await until('drey-2 healthy again', () => healthy(container('drey-2')), 30_000);
  });
});
