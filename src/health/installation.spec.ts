import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InstallationWatch, installationFiles } from '@/health/installation';

describe('InstallationWatch', () => {
  let root: string;
  let lock: string;
  let build: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'drey-installation-'));
    mkdirSync(join(root, 'node_modules'));
    mkdirSync(join(root, 'dist'));
    [lock, build] = installationFiles(root);
    writeFileSync(lock, '{"packages":{"node_modules/a":{"version":"1.0.0"}}}');
    writeFileSync(build, '{"version":"6.0.3","root":["src/main.ts"]}');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('sees nothing changed when nothing changed', () => {
    expect(new InstallationWatch(root).changed()).toEqual([]);
  });

  it('names the file whose content changed, and forgets it once the content is back', () => {
    const watch = new InstallationWatch(root);
    // Another length: the file system's clock may not tick between two writes, and stat is what says "read again".
    writeFileSync(lock, '{"packages":{"node_modules/a":{"version":"2.0.0-rc.1"}}}');
    expect(watch.changed()).toEqual([join('node_modules', '.package-lock.json')]);
    writeFileSync(lock, '{"packages":{"node_modules/a":{"version":"1.0.0"}}}');
    expect(watch.changed()).toEqual([]);
  });

  it('counts a file that disappears (npm ci deletes node_modules first) as a change', () => {
    const watch = new InstallationWatch(root);
    rmSync(join(root, 'node_modules'), { recursive: true });
    expect(watch.changed()).toEqual([join('node_modules', '.package-lock.json')]);
  });

  it('ignores a new time on the same content (npm start touches the build record)', () => {
    const watch = new InstallationWatch(root);
    const later = new Date(Date.now() + 60_000);
    utimesSync(build, later, later);
    expect(watch.changed()).toEqual([]);
    writeFileSync(build, '{"version":"6.0.3","root":["src/main.ts","src/new.ts"]}');
    expect(watch.changed()).toEqual([join('dist', '.tsbuildinfo')]);
  });

  it('treats a file absent at start and still absent as unchanged, and its arrival as a change', () => {
    rmSync(build);
    const watch = new InstallationWatch(root);
    expect(watch.changed()).toEqual([]);
    writeFileSync(build, '{}');
    expect(watch.changed()).toEqual([join('dist', '.tsbuildinfo')]);
  });
});
