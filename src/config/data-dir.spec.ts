import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@/config/config';
import { withProjectDataDir } from '@/config/data-dir';

describe('withProjectDataDir', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'drey-data-dir-'));
  });
  afterEach(() => rmSync(cwd, { recursive: true, force: true }));

  it('gives each project its own folder under .data when DATA_DIR is not set', () => {
    const config = loadConfig({}, cwd);
    expect(withProjectDataDir(config, 'expenses').config.dataDir).toBe(
      join(cwd, '.data', 'expenses'),
    );
    expect(withProjectDataDir(config, 'shop').config.dataDir).toBe(join(cwd, '.data', 'shop'));
    // Once resolved, it stays: a second call does not nest another folder.
    const once = withProjectDataDir(config, 'shop').config;
    expect(withProjectDataDir(once, 'shop').config.dataDir).toBe(join(cwd, '.data', 'shop'));
  });

  it('keeps DATA_DIR as set, even the default folder named explicitly', () => {
    const config = loadConfig({ DATA_DIR: '.data' }, cwd);
    expect(withProjectDataDir(config, 'expenses').config.dataDir).toBe(join(cwd, '.data'));
    expect(
      withProjectDataDir(loadConfig({ DATA_DIR: '/srv/state' }, cwd), 'x').config.dataDir,
    ).toBe('/srv/state');
  });

  it("says how to keep an earlier version's single-project folder", () => {
    const config = loadConfig({}, cwd);
    expect(withProjectDataDir(config, 'expenses').earlierState).toBeUndefined();
    mkdirSync(join(cwd, '.data', 'pglite'), { recursive: true });
    mkdirSync(join(cwd, '.data', 'environments'), { recursive: true });
    const { earlierState } = withProjectDataDir(config, 'expenses');
    expect(earlierState).toContain('pglite, environments');
    expect(earlierState).toContain(`DATA_DIR=${join(cwd, '.data')}`);
    expect(earlierState).toContain(join(cwd, '.data', 'expenses'));
    // Not said when DATA_DIR is set: the operator chose the folder.
    expect(
      withProjectDataDir(loadConfig({ DATA_DIR: '.data' }, cwd), 'expenses').earlierState,
    ).toBeUndefined();
  });
});
