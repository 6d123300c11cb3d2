import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { Api, P } from './support/api';
import { ServerProcess, TestServer, startServer } from './support/server';
import { TempDir, tempDir } from './support/services';

/**
 * Replicas on one Postgres and Redis, each with a DATA_DIR of its own (no shared folder): builds reach them
 * through the database.
 */
describe('replicas without a shared folder', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  const dirs: TempDir[] = [];
  const servedBuild = async (server: ServerProcess) =>
    ((await new Api(server.url).get('/health/ready')).body?.checks?.environment?.build as string) ??
    null;
  const sql = async <T>(text: string, values: unknown[] = []): Promise<T[]> => {
    const client = new Client({ connectionString: t.env.DATABASE_URL });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as T[];
    } finally {
      await client.end();
    }
  };
  const replica = async () => {
    const dir = tempDir();
    dirs.push(dir);
    return { server: await t.another({ DATA_DIR: dir.path }), dir };
  };

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
    dirs.forEach((dir) => dir.remove());
  });

  it('a replica that starts later fetches the current build instead of building', async () => {
    const { server } = await replica();
    expect(await servedBuild(server)).toBe(await servedBuild(t.server));
    expect(server.logs.some((line) => line.msg === 'environment fetched')).toBe(true);
    expect(server.logs.some((line) => line.msg === 'build started')).toBe(false);
    await server.stop();
  });

  it('a build on one replica is served by the others within 2 s of its end', async () => {
    const others = [await replica(), await replica()];
    expect((await api.request('POST', `${P}/build`, { token: admin })).status).toBe(200);
    const ended = Date.now();
    // The build ran on whichever replica took the job from the queue.
    const [latest] = (await api.get(`${P}/builds`, admin)).body as { id: string; status: string }[];
    expect(latest.status).toBe('succeeded');
    const built = latest.id;
    // The replica that ran it serves it as soon as it is said done (it once followed the store back to the
    // previous build for up to a poll, while its own was being published).
    const servers = [t.server, ...others.map((other) => other.server)];
    const builder = servers.find((server) =>
      server.logs.some((line) => line.msg === 'build started' && line.buildId === built),
    );
    expect(builder).toBeDefined();
    expect(await servedBuild(builder as ServerProcess)).toBe(built);
    const delays: number[] = [];
    for (const server of [t.server, ...others.map((other) => other.server)]) {
      while ((await servedBuild(server)) !== built && Date.now() - ended < 10000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      delays.push(Date.now() - ended);
      expect(await servedBuild(server)).toBe(built);
    }
    expect(Math.max(...delays)).toBeLessThan(2000);
    // Older builds leave the store: the current one and the one before stay.
    const stored = await sql<{ build_id: string }>('SELECT "build_id" FROM "environment_files"');
    expect(stored.length).toBeLessThanOrEqual(2);
    expect(stored.map((row) => row.build_id)).toContain(built);
    await Promise.all(others.map(({ server }) => server.stop()));
  });

  it('a replica that lost its DATA_DIR catches up at start', async () => {
    const { server, dir } = await replica();
    await server.stop();
    rmSync(dir.path, { recursive: true, force: true });
    const again = await t.another({ DATA_DIR: dir.path });
    expect(await servedBuild(again)).toBe(await servedBuild(t.server));
    await again.stop();
  });

  it('refuses a fetched file whose checksum is not the published one, and serves a good build instead', async () => {
    const corrupted = await servedBuild(t.server);
    await sql('UPDATE "environment_files" SET "sha256" = $1', ['0'.repeat(64)]);
    const dir = tempDir();
    dirs.push(dir);
    const server = await t.another({ DATA_DIR: dir.path });
    const refused = server.logs.find((line) => line.msg === 'environment not fetched');
    expect(String(refused?.error)).toContain('SHA-256');
    // Without a build it can trust, it asked for one (built by whichever replica took the job).
    await server.ready();
    expect(await servedBuild(server)).not.toBe(corrupted);
    await server.stop();
  });
});
