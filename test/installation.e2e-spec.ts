import {
  appendFileSync,
  copyFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  readFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Api, P } from './support/api';
import { REPO_ROOT, TestServer, startServer } from './support/server';
import { TempDir, tempDir } from './support/services';
import { until } from './support/wait';

/**
 * An upgrade in place (`git pull && npm ci` in the folder replicas run from) under a running server: the
 * server runs from a copy of the installation (dist/ copied, node_modules/ linked package by package, npm's
 * record of it copied), so that the test can change that installation as npm ci would.
 */
describe('an installation changed under a running server', () => {
  let install: TempDir;
  let t: TestServer;
  let api: Api;
  let lockFile: string;
  let buildInfo: string;

  beforeAll(async () => {
    install = tempDir('drey-install-');
    cpSync(join(REPO_ROOT, 'dist'), join(install.path, 'dist'), { recursive: true });
    copyFileSync(join(REPO_ROOT, 'package.json'), join(install.path, 'package.json'));
    const modules = join(install.path, 'node_modules');
    mkdirSync(modules);
    for (const name of readdirSync(join(REPO_ROOT, 'node_modules'))) {
      if (name === '.package-lock.json')
        copyFileSync(join(REPO_ROOT, 'node_modules', name), join(modules, name));
      else symlinkSync(join(REPO_ROOT, 'node_modules', name), join(modules, name));
    }
    lockFile = join(modules, '.package-lock.json');
    buildInfo = join(install.path, 'dist', '.tsbuildinfo');
    t = await startServer({}, true, join(install.path, 'dist', 'main.js'));
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t?.close();
    install?.remove();
  });

  const readiness = () => api.get('/health/ready');

  it('is ready with its installation and its renderer up (Chromium installed)', async () => {
    const ready = await until(
      readiness,
      (reply) => reply.body.checks.renderer.status !== 'degraded',
    );
    expect(ready.status).toBe(200);
    expect(ready.body.checks.installation).toEqual({ status: 'up', kind: 'files' });
    expect(ready.body.checks.renderer).toMatchObject({ status: 'up', kind: 'chromium' });
    expect(ready.body.checks.renderer.detail).toMatch(/^Chromium \d+/);
  });

  it('answers 503 naming the changed file and asking for a restart, and still renders PNG dashboards', async () => {
    const original = readFileSync(lockFile);
    // What npm ci does: node_modules goes away package by package, then comes back with another record.
    rmSync(join(install.path, 'node_modules', 'puppeteer-core'));
    appendFileSync(lockFile, '\n');
    const changed = await readiness();
    expect(changed.status).toBe(503);
    expect(changed.headers.get('retry-after')).toBe('5');
    expect(changed.body.status).toBe('not_ready');
    expect(changed.body.checks.installation.status).toBe('down');
    expect(changed.body.checks.installation.detail).toContain('node_modules/.package-lock.json');
    expect(changed.body.checks.installation.detail).toContain('restart this process');
    // puppeteer-core was loaded at start: its package leaving the folder does not take PNG dashboards down.
    const admin = await api.adminToken();
    const png = await api.get(`${P}/dashboards/expenses_dashboard/results`, admin);
    expect([png.status, png.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect((await readiness()).body.checks.renderer.detail).toContain('running');

    // The same files again (a reinstall of the same versions): nothing to restart for.
    writeFileSync(lockFile, original);
    expect((await readiness()).status).toBe(200);
  });

  it('answers 503 when dist/ was rebuilt under it', async () => {
    appendFileSync(buildInfo, ' ');
    const changed = await readiness();
    expect(changed.status).toBe(503);
    expect(changed.body.checks.installation.detail).toContain('dist/.tsbuildinfo');
  });
});
