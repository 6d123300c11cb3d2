import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { docScript, statusesOf } from './support/doc-examples';
import { ADMIN_PASSWORD, REPO_ROOT, TestServer, startServer } from './support/server';
import { tempDir } from './support/services';

/** Every curl example of docs/api.md, run as written against a real server, in order. */
describe('docs/api.md', () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers each example with the status the page says', () => {
    const { script, calls } = docScript(join(REPO_ROOT, 'docs', 'api.md'));
    expect(calls.length).toBeGreaterThan(40);
    const dir = tempDir();
    try {
      const statusFile = join(dir.path, 'statuses');
      writeFileSync(statusFile, '');
      const ran = spawnSync('bash', ['--noprofile', '--norc', '-c', script], {
        cwd: dir.path,
        env: { PATH: process.env.PATH ?? '', BASE: t.url, ADMIN_PASSWORD, STATUS_FILE: statusFile },
        encoding: 'utf8',
        timeout: 60000,
      });
      expect(ran.status).toBe(0);
      const statuses = statusesOf(statusFile);
      const wrong = calls.flatMap((call, index) =>
        statuses.get(index) === call.status
          ? []
          : [
              `docs/api.md:${call.line}: ${call.status} written, ${statuses.get(index)} answered: ${call.shell}`,
            ],
      );
      expect(wrong).toEqual([]);
    } finally {
      dir.remove();
    }
  });
});
