import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { P } from './support/api';
import { launchBrowser } from './support/browser';
import {
  checkablePrints,
  linkedClone,
  markdownBlocks,
  runScript,
  shellSteps,
  squeeze,
} from './support/doc-walkthrough';
import { REPO_ROOT } from './support/server';
import { freePort, tempDir } from './support/services';

const PAGE = join(REPO_ROOT, 'docs', 'embedding.md');

/**
 * docs/embedding.md's example as a reader runs it: Drey started by the page's first command on a clone (the
 * embedded database, no Redis), the host application by its second, both left running; then the host's page
 * in Chromium, which must frame the locked report and fill its table from the locked dataset. Ports are the
 * only change: free ones instead of 4465 and 8080.
 */
describe('docs/embedding.md', () => {
  it('runs as written: the host page frames the report and reads the totals with its own tokens', async () => {
    const steps = shellSteps(markdownBlocks(PAGE));
    expect(steps.map((step) => step.command.split('\n').pop()?.trim())).toEqual([
      'CORS_ORIGINS=http://127.0.0.1:8080 npm start',
      'node examples/embedding/host.js',
    ]);
    // The host's lines that size the frame are the example's, which the browser runs below.
    const resizing = markdownBlocks(PAGE).filter((block) => block.lang === 'js');
    expect(resizing).toHaveLength(1);
    expect(readFileSync(join(REPO_ROOT, 'examples', 'embedding', 'host.js'), 'utf8')).toContain(
      resizing[0].lines.join('\n'),
    );
    const dir = tempDir('drey-embedding-doc-');
    const clone = linkedClone(dir.path);
    const [drey, host] = [await freePort(), await freePort()];
    const ported = (command: string) =>
      command.replaceAll('4465', String(drey)).replaceAll('8080', String(host));
    const script = [
      'set -euo pipefail',
      'wait_for() { for _ in $(seq 240); do curl -fs "$1" > /dev/null && return 0; sleep 0.5; done; echo "nothing on $1" >&2; return 1; }',
      `PORT=${drey} ${ported(steps[0].command)} > "$OUT/drey.log" 2>&1 &`,
      `wait_for http://127.0.0.1:${drey}/health/ready`,
      `${ported(steps[1].command)} > "$OUT/host.log" 2>&1 &`,
      `wait_for http://127.0.0.1:${host}/`,
    ].join('\n');
    const run = await runScript(script, {
      cwd: clone,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: join(dir.path, 'home'),
        npm_config_update_notifier: 'false',
        OUT: dir.path,
      },
      timeoutMs: 240000,
    });
    let browser: Browser | undefined;
    try {
      const read = (name: string) => readFileSync(join(dir.path, name), 'utf8');
      expect([run.code, run.stderr.slice(-2000)]).toEqual([0, '']);
      const printed = squeeze(read('host.log'));
      expect(
        checkablePrints(steps[1])
          .map(ported)
          .filter((line) => !printed.includes(line)),
      ).toEqual([]);

      browser = await launchBrowser();
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${host}/`);
      await page.waitForSelector('body[data-loaded]', { timeout: 20000 });
      const report = page.frameLocator('#report');
      await report.locator('body').waitFor({ timeout: 20000 });
      const shown = await report.locator('body').innerText();
      expect(shown).toContain('Expenses Report');
      expect(shown).toContain('2024-06-01');
      // The totals the page shows are the dataset's with its locked value.
      const cells = await page.$$eval('#totals tbody tr', (rows) =>
        rows.map((row) => (row as unknown as { innerText: string }).innerText.split('\t')),
      );
      const direct = (await (
        await fetch(
          `http://127.0.0.1:${drey}${P}/datasets/expenses_by_month/results?max_filter=100`,
        )
      ).json()) as { data: { month: string; total_amount: number }[] };
      expect(cells).toEqual(direct.data.map((row) => [row.month, String(row.total_amount)]));
      expect(cells.length).toBeGreaterThan(0);

      // The PNG dashboard is shown as an image of another origin (a blocked one completes with no size).
      await page.waitForFunction("document.getElementById('overview').complete", undefined, {
        timeout: 30000,
      });
      expect(await page.evaluate("document.getElementById('overview').naturalWidth")).toBe(1200);
      // The frame is as tall as the report it shows: the report tells its height, the page's lines take it.
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
      if (!frame) throw new Error('the report is not in a frame');
      await frame.waitForFunction('window.__dreyReady === true');
      const content = await frame.evaluate<number>(
        'Math.ceil(document.documentElement.getBoundingClientRect().height)',
      );
      expect(content).toBeGreaterThan(640);
      await page.waitForFunction(
        `document.getElementById('report').getBoundingClientRect().height === ${content}`,
        undefined,
        { timeout: 10000 },
      );
    } finally {
      await browser?.close();
      await run.stop();
      dir.remove();
    }
  }, 300000);
});
