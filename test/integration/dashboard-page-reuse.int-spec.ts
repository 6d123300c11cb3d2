import { createHash } from 'node:crypto';
import type * as BrowserPoolFile from '@/dashboards/render/browser-pool';
import type * as PageLayoutFile from '@/dashboards/template/page-layout';
import type * as PageShellFile from '@/dashboards/template/page-shell';
import type * as JsonLoggerFile from '@/runtime/json-logger';
import { P } from '../support/api';
import { pngHeader } from '../support/png';
import { fromDist, useApp } from './bootstrap';

type BrowserPool = BrowserPoolFile.BrowserPool;

const DASHBOARD = `${P}/dashboards/expenses_dashboard/results`;
const SIZE = { width: 1200, height: 800 };
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const digest = (png: Buffer) => createHash('sha256').update(png).digest('hex');

/**
 * The warm shell of PNG renders (dashboards/template/page-shell.ts), on the real Chromium: pages of the
 * example dashboard for different selections, drawn in turn in one reused page, are each the PNG that page
 * gives loaded whole in a page of its own (byte for byte), so nothing of one render shows in the next; and a
 * page the shell must not take (anything that could run a script or load something) is loaded whole, in a
 * new window, and leaves nothing behind for the next render in that page.
 */
describe('PNG dashboards on a reused page', () => {
  const t = useApp({ env: { RENDER_PAGES: '1', METRICS_PUBLIC: 'true' } });
  /** Loads every page whole, in a new page each time: what a render gave before the shell. */
  let reference: BrowserPool;
  const pools: BrowserPool[] = [];
  const { BrowserPool: Pool } = fromDist<typeof BrowserPoolFile>('dashboards/render/browser-pool');
  const { LAYOUT_SHELL } = fromDist<typeof PageShellFile>('dashboards/template/page-shell');
  const { BOOT_SCRIPT } = fromDist<typeof PageLayoutFile>('dashboards/template/page-layout');
  const { JsonLogger } = fromDist<typeof JsonLoggerFile>('runtime/json-logger');
  const quiet = new JsonLogger('error', () => undefined);

  const pool = (shell?: typeof LAYOUT_SHELL, drawn?: string[]): BrowserPool => {
    const created = new Pool(
      {
        executablePath: CHROMIUM,
        maxPages: 1,
        maxQueued: 10,
        renderTimeoutMs: 20_000,
        rendersPerPage: shell ? 200 : 1,
        shell,
      },
      quiet,
      { drawn: (by) => drawn?.push(by) },
    );
    pools.push(created);
    return created;
  };

  beforeAll(() => {
    reference = pool();
  });
  afterAll(async () => {
    await Promise.all(pools.map((each) => each.close()));
  });

  const drawnCounts = async (): Promise<Record<string, number>> => {
    const text = (await t.http().get('/metrics')).text;
    const counts: Record<string, number> = {};
    for (const [, by, value] of text.matchAll(
      /^drey_render_pages_drawn_total\{by="(\w+)"\} (\S+)$/gm,
    )) {
      counts[by] = Number(value);
    }
    return counts;
  };

  it('draws two selections in turn in one page, each as its page loaded whole', async () => {
    const renderPng = t.spyOn('dashboards/render/browser-pool', 'BrowserPool', 'renderPng');
    const before = await drawnCounts();
    const selections = [
      ['2024-01-01', '2024-03-31'],
      ['2024-06-01', '2024-12-31'],
      ['2024-02-01', '2024-02-29'],
    ];
    const bodies: Buffer[] = [];
    for (const [start, end] of selections) {
      const reply = await t
        .http()
        .get(DASHBOARD)
        .query(`date_range=${start}&date_range=${end}`)
        .set('Authorization', `Bearer ${t.token('admin')}`)
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toBe('image/png');
      bodies.push(reply.body as Buffer);
    }
    // One page for all three (RENDER_PAGES=1), each swapped into its shell.
    const after = await drawnCounts();
    expect((after.swapped ?? 0) - (before.swapped ?? 0)).toBe(3);
    expect(after.loaded ?? 0).toBe(before.loaded ?? 0);
    expect(new Set(bodies.map(digest)).size).toBe(3);

    const pages = renderPng.mock.calls.map((call) => call[0] as string);
    expect(pages).toHaveLength(3);
    for (const [i, html] of pages.entries()) {
      expect(html).toContain(selections[i][0]);
      const whole = await reference.renderPng(html, SIZE);
      expect(digest(bodies[i])).toBe(digest(whole));
      expect(pngHeader(bodies[i]).width).toBe(SIZE.width);
    }
  });

  /** A page of the example, with `markup` added to its panels; a selection not asked for before each time. */
  let asked = 0;
  const withMarkup = async (markup: string): Promise<string> => {
    const renderPng = t.spyOn('dashboards/render/browser-pool', 'BrowserPool', 'renderPng');
    asked += 1;
    await t
      .http()
      .get(DASHBOARD)
      .query(`date_range=2024-04-01&date_range=2024-05-${String(asked).padStart(2, '0')}`)
      .set('Authorization', `Bearer ${t.token('admin')}`)
      .expect(200);
    const html = renderPng.mock.calls[0]?.[0] as string | undefined;
    if (html === undefined) throw new Error('no render: the page came from the cache');
    const board = '<div class="board">';
    expect(html).toContain(board);
    return html.replace(board, `${board}${markup}`);
  };

  // Each would run, or load something, in the shell: every one must be loaded whole.
  const UNSAFE: Record<string, string> = {
    'a script of its own': '<script>document.title = "mine"</script>',
    'an event handler': '<div onclick="x()">x</div>',
    'an image that fails': '<img src="data:," onerror="x()">',
    'a frame of its own': '<iframe srcdoc="<script>parent.x()</script>"></iframe>',
    'SVG, which has scripts of its own': '<svg><circle r="4"/></svg>',
    'a javascript: URL': '<div title="javascript:x()">x</div>',
    'a style that loads an image': '<div style="background:url(data:image/png;base64,AA)">x</div>',
    'a style sheet that loads a font': '<style>@font-face{font-family:f;src:local(Arial)}</style>',
    'a refresh': '<meta http-equiv="refresh" content="3600">',
    'autofocus, done once per document': '<p tabindex="0" autofocus>x</p>',
    'a policy of its own, which would stay for later renders':
      '<meta http-equiv="Content-Security-Policy" content="style-src \'none\'">',
    'a template (declarative shadow DOM)': '<template shadowrootmode="open"><p>x</p></template>',
    'noscript, parsed otherwise with scripts off': '<noscript><p>x</p></noscript>',
    'a data script that is not JSON': '<script type="text/plain" class="drey-chart">x</script>',
    'the drawing script before the panels': '{{BOOT}}',
  };

  it('loads a page of its own (no layout) in a new window, not in the shell the last render left', async () => {
    const drawn: string[] = [];
    const warm = pool(LAYOUT_SHELL, drawn);
    // Shows what it finds of the shell's window: nothing, in a new one.
    const own = `<!doctype html><html><body><p id="seen" style="font-size:40px"></p><script>
      document.getElementById('seen').textContent =
        [typeof window.Chart, typeof window.__dreySwap, String(window.__dreyReady)].join(' ');
      window.__dreyReady = true;
    </script></body></html>`;
    await warm.renderPng(await withMarkup(''), SIZE);
    const seen = await warm.renderPng(own, SIZE);
    expect(drawn).toEqual(['swapped', 'loaded']);
    expect(digest(seen)).toBe(digest(await reference.renderPng(own, SIZE)));
  });

  describe('a page the shell must not take', () => {
    const drawn: string[] = [];
    let warm: BrowserPool;
    beforeAll(() => {
      warm = pool(LAYOUT_SHELL, drawn);
    });

    it.each(Object.entries(UNSAFE))('with %s is loaded whole', async (_, markup) => {
      drawn.length = 0;
      const html = await withMarkup(markup.replace('{{BOOT}}', `<script>${BOOT_SCRIPT}</script>`));
      await warm.renderPng(html, SIZE);
      expect(drawn).toEqual(['loaded']);
    });

    it('while the same page, markup aside, is swapped in', async () => {
      drawn.length = 0;
      await warm.renderPng(await withMarkup('<p class="note">plain <b>text</b></p>'), SIZE);
      expect(drawn).toEqual(['swapped']);
    });
  });

  it('a page loaded whole leaves nothing in the page for the next render, swapped in again', async () => {
    const drawn: string[] = [];
    const warm = pool(LAYOUT_SHELL, drawn);
    const clean = await withMarkup('');
    // Keeps writing into whatever document it can reach, and leaves a global behind.
    const leaky = await withMarkup(
      `<script>window.leaked = true; setInterval(function () {
        document.body.insertAdjacentHTML('afterbegin', '<h1 style="font-size:90px">LEAKED</h1>');
      }, 0);</script>`,
    );
    const first = await warm.renderPng(clean, SIZE);
    const leaked = await warm.renderPng(leaky, SIZE);
    const after = await warm.renderPng(clean, SIZE);
    expect(drawn).toEqual(['swapped', 'loaded', 'swapped']);
    expect(digest(leaked)).not.toBe(digest(first));
    expect(digest(after)).toBe(digest(first));
    expect(digest(after)).toBe(digest(await reference.renderPng(clean, SIZE)));
    expect(warm.stats().peakPagesOpen).toBe(1);
  });
});
