import { join } from 'node:path';
import { Client } from 'pg';
import { linkedClone, markdownBlocks, runScript, shellSteps } from './support/doc-walkthrough';
import { REPO_ROOT } from './support/server';
import { BASE_DATABASE_URL, tempDir, uniqueName } from './support/services';

const DEPLOYMENT = join(REPO_ROOT, 'docs', 'deployment.md');
/** The recipe's own database and Redis prefix; the test gives each run names of its own instead. */
const PAGE_DATABASE = 'drey_replicas';
const PAGE_PREFIX = 'drey-replicas';

/** The block of docs/deployment.md that starts three replicas without containers. */
function replicaRecipe(): string[] {
  const block = markdownBlocks(DEPLOYMENT).find(
    (candidate) =>
      candidate.lang === 'sh' && candidate.lines.some((line) => line.includes('447$i')),
  );
  if (!block) throw new Error('docs/deployment.md: no three-replica block');
  return shellSteps([block]).map((step) => step.command);
}

async function portsFree(ports: number[]): Promise<number[]> {
  const busy: number[] = [];
  for (const port of ports) {
    const answered = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (answered) busy.push(port);
  }
  return busy;
}

/**
 * The three-replica recipe of docs/deployment.md run as written, on the real Postgres and Redis, from a
 * clone's folder: its database and its Redis prefix are the only changes (names of this run's own, so that
 * the test never joins another run's queue), and its ports 4471 to 4473 must be free. It must wait for the
 * replicas itself, and end with the same build id from all three.
 */
describe('docs/deployment.md, three replicas', () => {
  it('starts them, waits for readiness, and sees one build reach all three', async () => {
    expect(await portsFree([4471, 4472, 4473])).toEqual([]);
    const commands = replicaRecipe();
    expect(commands.join('\n')).toContain(`REDIS_PREFIX=${PAGE_PREFIX}`);
    expect(commands.join('\n')).not.toMatch(/\bsleep (\d{2,}|[3-9])\b/);
    const database = uniqueName('drey_docs');
    const prefix = uniqueName('drey-docs');
    const dir = tempDir('drey-replicas-');
    const clone = linkedClone(dir.path);
    const script = [
      'set -euo pipefail',
      ...commands.map((command) =>
        command.replaceAll(PAGE_DATABASE, database).replaceAll(PAGE_PREFIX, prefix),
      ),
    ].join('\n');
    const host = new URL(BASE_DATABASE_URL);
    expect([host.hostname, host.port || '5432', host.username]).toEqual([
      '127.0.0.1',
      '5432',
      'postgres',
    ]);

    const run = await runScript(script, {
      cwd: clone,
      env: { PATH: process.env.PATH ?? '', HOME: join(dir.path, 'home') },
      // About 60 s on two idle cores; a loaded machine may need twice that.
      timeoutMs: 240000,
    });
    try {
      expect({ code: run.code, stderr: run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: '' });
      const ids = run.stdout.trim().split('\n').slice(-3);
      expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(ids).toEqual([ids[0], ids[0], ids[0]]);
    } finally {
      await run.stop();
      const admin = new Client({ connectionString: BASE_DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
      dir.remove();
    }
  }, 300000);
});
