import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { Api, P } from './support/api';
import { launchBrowser } from './support/browser';
import { pngHeader } from './support/png';
import { EXAMPLE_PROJECT, LogLine, ServerProcess, TestServer, startServer } from './support/server';
import { TempDir, tempDir } from './support/services';

const RENDER_PAGES = 2;

/** Extra dashboards beside the example's: pages that reach out, never get ready, or take their time. */
const EXTRA_DASHBOARDS: Record<string, { format: string; template: string }> = {
  // Uses the layout: its Content-Security-Policy refuses both requests, and the page reports them.
  outside_fetch: {
    format: 'png',
    template: `{% extends "drey/dashboard.html" %}
{% block content %}
<section class="panel span-12"><h2>Outside</h2><img src="http://10.255.255.1/x.png" alt="outside"></section>
<script>fetch('http://example.com/').catch(function () {});</script>
{% endblock %}`,
  },
  // Its own page, no policy: Chromium's request filter refuses them.
  outside_raw: {
    format: 'png',
    template: `<!doctype html><html><body><p>raw</p><img src="http://10.255.255.1/raw.png">
<script>fetch('http://example.com/raw').catch(function () {}).then(function () { window.__dreyReady = true; });</script>
</body></html>`,
  },
  never_ready: { format: 'png', template: '<!doctype html><p>I never say I am ready</p>' },
  slow: {
    format: 'png',
    template: `<!doctype html><p>slow</p><script>setTimeout(function () { window.__dreyReady = true; }, 1500);</script>`,
  },
  escaped: { format: 'html', template: '{% extends "drey/dashboard.html" %}' },
  // Two headline figures beside a tall chart, in one row of the grid.
  stats_beside_chart: {
    format: 'html',
    template: `{% extends "drey/dashboard.html" %}
{% set months = dataset('expenses_by_month').rows %}
{% block content %}
  {{ stat('Months', months | length) }}
  {{ stat('Total', months | sum('total_amount')) }}
  {{ chart(months, type='bar', x='month', y='total_amount', title='By month', size='half', height=420) }}
{% endblock %}`,
  },
};

/** The example project plus the dashboards above, in a temporary folder. */
function projectWithExtraDashboards(): TempDir {
  const dir = tempDir('drey-dashboards-');
  cpSync(EXAMPLE_PROJECT, dir.path, { recursive: true });
  const manifest = parseDocument(readFileSync(join(dir.path, 'project.yml'), 'utf8'));
  for (const [name, { format, template }] of Object.entries(EXTRA_DASHBOARDS)) {
    writeFileSync(join(dir.path, 'dashboards', `${name}.html`), template);
    manifest.addIn(['dashboards'], {
      name,
      label: name,
      description: name === 'escaped' ? '<script>alert("owned")</script> & more' : name,
      scope: 'public',
      format,
      // A selection makes each request of `slow` a page of its own: identical ones share one render.
      parameters: name === 'slow' ? ['start_date'] : [],
      template: `dashboards/${name}.html`,
    });
  }
  writeFileSync(join(dir.path, 'project.yml'), manifest.toString());
  return dir;
}

/** The Chromium the server launched: its direct child (Debian's wrapper script execs the binary). */
function chromiumOf(server: ServerProcess): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat) ?? [];
      const ppid = Number(rest?.split(' ')[1]);
      if (ppid === server.child.pid && comm?.startsWith('chrom')) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
}

async function until(check: () => boolean | Promise<boolean>, ms = 15000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function png(url: string, token?: string) {
  const started = Date.now();
  const response = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  const body = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body,
    ms: Date.now() - started,
  };
}

const logged = (server: ServerProcess, msg: string): LogLine[] =>
  server.logs.filter((line) => line.msg === msg);

describe('PNG rendering through the Chromium pool', () => {
  let project: TempDir;
  let t: TestServer;
  let api: Api;
  let token: string;
  let metrics: () => Promise<Record<string, number>>;
  const dashboard = (name: string, query = '') => `${t.url}${P}/dashboards/${name}/results${query}`;

  beforeAll(async () => {
    project = projectWithExtraDashboards();
    t = await startServer({
      PROJECT_DIR: project.path,
      RENDER_PAGES: String(RENDER_PAGES),
      RENDER_QUEUE: '50',
      RENDER_TIMEOUT_MS: '4000',
      METRICS_PUBLIC: 'true',
    });
    api = new Api(t.url);
    token = await api.userToken(await api.adminToken(), 'viewer');
    await until(async () => (await api.get('/health/ready')).status === 200, 30000);
    metrics = async () => {
      const text = (await api.get('/metrics')).text;
      const values: Record<string, number> = {};
      for (const [, name, value] of text.matchAll(/^(drey_render_[^ ]+) (\S+)$/gm)) {
        values[name] = Number(value);
      }
      return values;
    };
  });
  afterAll(async () => {
    await t.close();
    project.remove();
  });

  it(`renders 20 PNGs at once, all answered, with at most ${RENDER_PAGES} pages and bounded memory`, async () => {
    const pid = t.server.child.pid!;
    expect((await png(dashboard('expenses_dashboard'), token)).status).toBe(200);
    const before = rssBytes(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 25);
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        png(
          dashboard(
            'expenses_dashboard',
            `?date_range=2024-01-01&date_range=2024-${String((i % 12) + 1).padStart(2, '0')}-28`,
          ),
          token,
        ),
      ),
    ).finally(() => clearInterval(sampler));
    expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    for (const reply of replies) expect(pngHeader(reply.body).width).toBe(1200);
    expect(peak).toBeLessThan(1.5 * 1024 ** 3);
    expect(rssBytes(pid)).toBeLessThan(before + 512 * 1024 ** 2);
    const values = await metrics();
    expect(values.drey_render_pages_peak).toBeLessThanOrEqual(RENDER_PAGES);
    expect(values.drey_render_pages_limit).toBe(RENDER_PAGES);
    // Twelve distinct selections among the twenty, plus the first request's: the repeats are served from
    // the cache or join the render of their twin (dashboard-cache.e2e-spec.ts).
    expect(values['drey_render_duration_seconds_count{outcome="ok"}']).toBeGreaterThanOrEqual(13);
    const opened = logged(t.server, 'render page opened');
    expect(opened.length).toBeGreaterThan(0);
    expect(Math.max(...opened.map((line) => Number(line.pagesOpen)))).toBeLessThanOrEqual(
      RENDER_PAGES,
    );
  });

  it('renders a page that tries to reach outside without it, and logs each refused request', async () => {
    for (const name of ['outside_fetch', 'outside_raw']) {
      const reply = await png(dashboard(name));
      expect([name, reply.status, reply.type]).toEqual([name, 200, 'image/png']);
    }
    const refused = logged(t.server, 'dashboard request refused').map((line) => String(line.url));
    expect(refused).toEqual(
      expect.arrayContaining([
        'http://10.255.255.1/x.png',
        'http://example.com/',
        'http://10.255.255.1/raw.png',
        'http://example.com/raw',
      ]),
    );
  });

  it('a page that never gets ready fails after the render time limit, and the next render works', async () => {
    const reply = await api.get(`${P}/dashboards/never_ready/results`);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: 'query_timeout' });
    expect((await png(dashboard('expenses_report'))).status).toBe(200);
    expect((await png(dashboard('outside_raw'))).status).toBe(200);
  });

  it('escapes the dashboard’s own text: a description with <script> is shown, not run', async () => {
    const reply = await api.get(`${P}/dashboards/escaped/results`);
    expect(reply.status).toBe(200);
    expect(reply.text).toContain(
      '&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt; &amp; more',
    );
    expect(reply.text).not.toContain('<script>alert');
  });

  it('keeps stat cards at their own height beside a taller chart in a row (Chromium)', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(dashboard('stats_beside_chart'));
      await page.waitForFunction('window.__dreyReady === true');
      // Each panel's box: stat cards first, then the chart, as the template writes them.
      const boxes = await page.evaluate<{ kind: string; top: number; height: number }[]>(
        `[...document.querySelectorAll('.board > .panel')].map(function (panel) {
          var box = panel.getBoundingClientRect();
          return { kind: panel.classList.contains('stat') ? 'stat' : 'chart', top: box.top, height: box.height };
        })`,
      );
      expect(boxes.map((box) => box.kind)).toEqual(['stat', 'stat', 'chart']);
      const [first, second, chart] = boxes;
      // One row: the same top.
      expect(new Set(boxes.map((box) => Math.round(box.top))).size).toBe(1);
      expect(chart.height).toBeGreaterThan(420);
      // A card is as tall as its label, figure and note, not as the chart beside it.
      for (const card of [first, second]) expect(card.height).toBeLessThan(chart.height / 3);
    } finally {
      await browser.close();
    }
  });

  it('killing Chromium between two requests costs one slow request, not an error', async () => {
    // Selections of their own, so that each request renders rather than reads a kept page.
    const fresh = (day: string) =>
      dashboard('expenses_dashboard', `?date_range=2024-02-${day}&date_range=2024-11-30`);
    expect((await png(fresh('01'), token)).status).toBe(200);
    const chromium = chromiumOf(t.server);
    expect(chromium).toBeDefined();
    const launches = (await metrics()).drey_render_browser_launches_total;
    process.kill(chromium!, 'SIGKILL');
    await until(
      () =>
        !existsSync(`/proc/${chromium}/stat`) ||
        readFileSync(`/proc/${chromium}/stat`, 'utf8').includes(') Z '),
    );
    const afterKill = await png(fresh('02'), token);
    expect(afterKill.status).toBe(200);
    expect(pngHeader(afterKill.body).width).toBe(1200);
    const next = await png(fresh('03'), token);
    expect(next.status).toBe(200);
    expect((await metrics()).drey_render_browser_launches_total).toBe(launches + 1);
    expect(chromiumOf(t.server)).not.toBe(chromium);
    // Slow (a new Chromium starts), but well within a render's time limit.
    expect(afterKill.ms).toBeLessThan(10_000);
  });

  it('killing Chromium during a render retries it once on a new browser', async () => {
    // Counted from here: the previous test's kill may already have caused a retry of its own.
    const retriesBefore = logged(t.server, 'render retried after the browser went away').length;
    const retriedBefore =
      (await metrics())['drey_render_duration_seconds_count{outcome="retried"}'] ?? 0;
    const render = png(dashboard('slow', '?start_date=2024-01-02'));
    await until(async () => (await metrics())['drey_render_pages{state="busy"}'] === 1);
    process.kill(chromiumOf(t.server)!, 'SIGKILL');
    const reply = await render;
    expect(reply.status).toBe(200);
    expect(logged(t.server, 'render retried after the browser went away').length).toBe(
      retriesBefore + 1,
    );
    expect((await metrics())['drey_render_duration_seconds_count{outcome="retried"}']).toBe(
      retriedBefore + 1,
    );
  });

  it('refuses renders beyond the queue with 503 and Retry-After instead of piling them up', async () => {
    const small = await t.another({ RENDER_PAGES: '1', RENDER_QUEUE: '1' });
    // Four distinct pages: four identical requests would share one render (single flight).
    const url = (i: number) =>
      `${small.url}${P}/dashboards/slow/results?start_date=2024-03-0${i + 1}`;
    const replies = await Promise.all(Array.from({ length: 4 }, (_, i) => fetch(url(i))));
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(2);
    const refused = replies.find((reply) => reply.status === 503);
    expect(refused).toBeDefined();
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused!.json()) as { error: string }).error).toBe('not_ready');
    await Promise.all(replies.map((reply) => reply.arrayBuffer().catch(() => undefined)));
  });
});
