import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserState } from '@/dashboards/render/browser-launcher';
import { RendererProbe, RendererState } from '@/dashboards/render/renderer-probe';

/** The probe against small executables standing in for Chromium, and a pool whose state the test sets. */
describe('RendererProbe', () => {
  let dir: string;
  let pool: { state: BrowserState; browserState(): BrowserState };
  const loaded = () => Promise.resolve({});

  function executable(name: string, body: string): string {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  }

  async function settled(probe: RendererProbe): Promise<RendererState> {
    for (let i = 0; i < 200; i++) {
      const state = probe.state();
      if (state.works !== undefined) return state;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the probe never settled');
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'drey-renderer-'));
    pool = {
      state: { running: false },
      browserState() {
        return this.state;
      },
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('works when the executable answers its version, and says whether a browser runs', async () => {
    const path = executable('chromium', 'echo "Chromium 156.0.1 built on Debian"');
    const probe = new RendererProbe(path, pool, loaded);
    probe.start();
    expect(await settled(probe)).toEqual({
      works: true,
      detail: `Chromium 156.0.1 built on Debian at ${path}, started by the first PNG dashboard`,
    });
    pool.state = { running: true };
    expect(probe.state().detail).toBe(`Chromium 156.0.1 built on Debian at ${path}, running`);
  });

  it('does not work without an executable at CHROMIUM_PATH, and says what to install', async () => {
    const probe = new RendererProbe(join(dir, 'none'), pool, loaded);
    probe.start();
    const state = await settled(probe);
    expect(state.works).toBe(false);
    expect(state.detail).toContain(`CHROMIUM_PATH (${join(dir, 'none')})`);
  });

  it('does not work when the executable fails', async () => {
    const probe = new RendererProbe(
      executable('broken', 'echo "libnss3.so missing" >&2; exit 127'),
      pool,
      loaded,
    );
    probe.start();
    const state = await settled(probe);
    expect(state.works).toBe(false);
    expect(state.detail).toContain('does not run');
  });

  it('does not work once a launch failed, until one succeeds', async () => {
    const probe = new RendererProbe(executable('chromium', 'echo Chromium 1'), pool, loaded);
    probe.start();
    expect((await settled(probe)).works).toBe(true);
    pool.state = { running: false, launchError: 'Failed to launch the browser process' };
    expect(probe.state()).toMatchObject({ works: false });
    expect(probe.state().detail).toContain(
      'could not start (Failed to launch the browser process)',
    );
    pool.state = { running: true };
    expect(probe.state().works).toBe(true);
  });

  it('does not work when puppeteer-core cannot be loaded', async () => {
    const probe = new RendererProbe(executable('chromium', 'echo Chromium 1'), pool, () =>
      Promise.reject(new Error("Cannot find module 'puppeteer-core'")),
    );
    probe.start();
    await settled(probe);
    await new Promise((resolve) => setImmediate(resolve));
    expect(probe.state()).toEqual({
      works: false,
      detail:
        "puppeteer-core could not be loaded (Cannot find module 'puppeteer-core'): PNG dashboards cannot be rendered; HTML dashboards work",
    });
  });
});
