import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { Api, L, P } from './support/api';
import { counter, executions } from './support/observe';
import { pngHeader } from './support/png';
import { EXAMPLE_PROJECT, ServerProcess, TestServer, startServer } from './support/server';
import { TempDir, tempDir } from './support/services';
import { until } from './support/wait';

/**
 * The example plus: a dataset whose model reads the caller's role and a page over it; a dataset whose SQL
 * changes between runs (random()) and a page over it; the example's report as a private page.
 */
function projectCopy(): TempDir {
  const dir = tempDir('drey-dashboard-cache-');
  cpSync(EXAMPLE_PROJECT, dir.path, { recursive: true });
  const files: Record<string, string> = {
    'models/by_role.yml': 'kind: runtime\n',
    'models/by_role.sql':
      "SELECT {{ user.role }} AS role, count(*) AS expenses FROM {{ ref('expenses') }}",
    'models/dice.yml': 'kind: runtime\n',
    'models/dice.sql': 'SELECT random() AS r',
    'dashboards/role_page.html':
      "<!doctype html><p id=role>{{ dataset('by_role').rows[0].role }}</p>",
    'dashboards/dice_page.html': "<!doctype html><p>{{ dataset('dice').rows[0].r }}</p>",
  };
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir.path, file), text);
  const manifest = parseDocument(readFileSync(join(dir.path, 'project.yml'), 'utf8'));
  manifest.addIn(['datasets'], { name: 'by_role', scope: 'protected', model: 'by_role' });
  manifest.addIn(['datasets'], { name: 'dice', scope: 'public', model: 'dice' });
  const page = (name: string, scope: string, template: string, parameters: string[] = []) =>
    manifest.addIn(['dashboards'], {
      name,
      label: name,
      description: name,
      scope,
      format: 'html',
      parameters,
      template,
    });
  page('role_page', 'protected', 'dashboards/role_page.html');
  page('dice_page', 'public', 'dashboards/dice_page.html');
  page('private_report', 'private', 'dashboards/expenses_report.html', ['start_date', 'end_date']);
  writeFileSync(join(dir.path, 'project.yml'), manifest.toString());
  return dir;
}

interface Got {
  status: number;
  body: Buffer;
  headers: Headers;
}

async function get(url: string, token?: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    headers: { ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
  });
  return {
    status: response.status,
    body: Buffer.from(await response.arrayBuffer()),
    headers: response.headers,
  } as Got;
}

/** The server's own time for a request, from its log line (what "at the server" means). */
function serverMs(server: ServerProcess, reply: Got): number {
  const id = reply.headers.get('x-request-id') ?? '';
  const line = server.linesOf(id).find((entry) => entry.msg === 'request');
  return Number(line?.durationMs);
}

const renders = (url: string, dashboard: string) =>
  counter(url, 'drey_dashboard_renders_total', `dashboard="${dashboard}"`);
const answered = (url: string, dashboard: string, outcome: string) =>
  counter(
    url,
    'drey_dashboard_cache_requests_total',
    `dashboard="${dashboard}",outcome="${outcome}"`,
  );

/** Selections of the PNG dashboard that no other test asks for: a page not rendered yet. */
let nextMonth = 0;
function freshSelections(): string {
  nextMonth += 1;
  const day = String(nextMonth).padStart(2, '0');
  return `date_range=2024-01-${day}&date_range=2024-12-31`;
}

describe('cached dashboards', () => {
  let project: TempDir;
  let t: TestServer;
  let api: Api;
  let admin: string;
  let emily: string;
  let ella: string;
  let mark: string;
  const png = (query: string) => `${t.url}${P}/dashboards/expenses_dashboard/results?${query}`;

  beforeAll(async () => {
    project = projectCopy();
    t = await startServer({ PROJECT_DIR: project.path, METRICS_PUBLIC: 'true' });
    api = new Api(t.url);
    admin = await api.adminToken();
    emily = await api.userToken(admin, 'emily', { role: 'employee' });
    ella = await api.userToken(admin, 'ella', { role: 'employee' });
    mark = await api.userToken(admin, 'mark', { role: 'manager' });
  });
  afterAll(async () => {
    await t.close();
    project.remove();
  });

  it('a repeated PNG is the kept one: the same bytes, one render, a fraction of the time, in both layouts', async () => {
    const query = freshSelections();
    const before = await renders(t.url, 'expenses_dashboard');
    const first = await get(png(query), emily);
    const second = await get(png(query), emily);
    const legacy = await get(`${t.url}${L}/dashboard/expenses-dashboard?${query}`, emily);
    expect([first.status, second.status, legacy.status]).toEqual([200, 200, 200]);
    expect(first.headers.get('content-type')).toBe('image/png');
    expect(pngHeader(first.body).width).toBe(1200);
    expect(second.body.equals(first.body)).toBe(true);
    expect(legacy.body.equals(first.body)).toBe(true);
    expect(await renders(t.url, 'expenses_dashboard')).toBe(before + 1);
    expect(await answered(t.url, 'expenses_dashboard', 'memory')).toBeGreaterThanOrEqual(2);
    // At the server: a render takes hundreds of milliseconds, a kept page a few.
    expect(serverMs(t.server, second)).toBeLessThan(serverMs(t.server, first) / 5);
    const rendered = t.server.logs.filter((line) => line.msg === 'dashboard rendered');
    expect(rendered.at(-1)).toMatchObject({
      dashboard: 'expenses_dashboard',
      contentType: 'image/png',
    });
  });

  it('answers If-None-Match with 304 in both layouts; a POST is not conditional; another ETag gets the page', async () => {
    const query = freshSelections();
    const first = await get(png(query), emily);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    const current = await get(png(query), emily, { 'If-None-Match': etag! });
    expect(current.status).toBe(304);
    expect(current.body.length).toBe(0);
    expect(current.headers.get('etag')).toBe(etag);
    const legacy = await get(`${t.url}${L}/dashboard/expenses_dashboard?${query}`, emily, {
      'If-None-Match': `W/"other", ${etag}`,
    });
    expect(legacy.status).toBe(304);
    const other = await get(png(query), emily, { 'If-None-Match': '"not-this-one"' });
    expect(other.status).toBe(200);
    expect(other.body.equals(first.body)).toBe(true);
    const [start, end] = query.split('&').map((part) => part.split('=')[1]);
    const posted = await fetch(`${t.url}${P}/dashboards/expenses_dashboard/results`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${emily}`,
        'Content-Type': 'application/json',
        'If-None-Match': etag!,
      },
      body: JSON.stringify({ date_range: [start, end] }),
    });
    expect(posted.status).toBe(200);
    // The same selections by POST are the same page.
    expect(Buffer.from(await posted.arrayBuffer()).equals(first.body)).toBe(true);
  });

  it('ten identical requests sent together render once', async () => {
    const query = freshSelections();
    const before = await renders(t.url, 'expenses_dashboard');
    const executed = await answered(t.url, 'expenses_dashboard', 'executed');
    const joined = await answered(t.url, 'expenses_dashboard', 'joined');
    const memory = await answered(t.url, 'expenses_dashboard', 'memory');
    const replies = await Promise.all(Array.from({ length: 10 }, () => get(png(query), emily)));
    expect(replies.map((reply) => reply.status)).toEqual(Array(10).fill(200));
    for (const reply of replies) expect(reply.body.equals(replies[0].body)).toBe(true);
    expect(await renders(t.url, 'expenses_dashboard')).toBe(before + 1);
    expect(await answered(t.url, 'expenses_dashboard', 'executed')).toBe(executed + 1);
    // The other nine waited for that render (or, arriving after it, read it from memory).
    const waited = (await answered(t.url, 'expenses_dashboard', 'joined')) - joined;
    const kept = (await answered(t.url, 'expenses_dashboard', 'memory')) - memory;
    expect(waited + kept).toBe(9);
    expect(waited).toBeGreaterThan(0);
  });

  it('a second process serves the first one’s render from Redis without rendering; requests to both render once', async () => {
    const second = await t.another();
    const url2 = (query: string) =>
      `${second.url}${P}/dashboards/expenses_dashboard/results?${query}`;
    const query = freshSelections();
    const first = await get(png(query), emily);
    expect(first.status).toBe(200);
    const fromRedis = await get(url2(query), emily);
    expect(fromRedis.status).toBe(200);
    expect(fromRedis.body.equals(first.body)).toBe(true);
    expect(fromRedis.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(await renders(second.url, 'expenses_dashboard')).toBe(0);
    expect(await answered(second.url, 'expenses_dashboard', 'shared')).toBe(1);

    const together = freshSelections();
    const before = await renders(t.url, 'expenses_dashboard');
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => get(i % 2 ? url2(together) : png(together), emily)),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(10).fill(200));
    for (const reply of replies) expect(reply.body.equals(replies[0].body)).toBe(true);
    const rendered =
      (await renders(t.url, 'expenses_dashboard')) -
      before +
      (await renders(second.url, 'expenses_dashboard'));
    expect(rendered).toBe(1);
  });

  it('checks the scope before the cache: a kept private page is refused to others, its ETag too', async () => {
    const path = `${P}/dashboards/private_report/results?start_date=2024-04-01`;
    const kept = await get(`${t.url}${path}`, admin);
    expect(kept.status).toBe(200);
    expect(kept.body.toString()).toContain('<dt>Start Date</dt><dd>2024-04-01</dd>');
    expect((await get(`${t.url}${path}`, admin)).body.equals(kept.body)).toBe(true);
    const etag = kept.headers.get('etag')!;
    const refused = await get(`${t.url}${path}`, emily, { 'If-None-Match': etag });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body.toString())).toMatchObject({ error: 'forbidden' });
    expect((await get(`${t.url}${path}`, undefined, { 'If-None-Match': etag })).status).toBe(401);
    const legacy = await get(`${t.url}${L}/dashboard/private-report?start_date=2024-04-01`, emily);
    expect(legacy.status).toBe(403);
    expect(Object.keys(JSON.parse(legacy.body.toString()))).toEqual(['detail']);
  });

  it('keys a page whose datasets read the caller by what they read: one page per role, shared within it', async () => {
    const path = `${t.url}${P}/dashboards/role_page/results`;
    const before = await renders(t.url, 'role_page');
    const forEmily = await get(path, emily);
    const forElla = await get(path, ella);
    const forMark = await get(path, mark);
    expect(forEmily.body.toString()).toContain('<p id=role>employee</p>');
    expect(forElla.body.equals(forEmily.body)).toBe(true);
    expect(forMark.body.toString()).toContain('<p id=role>manager</p>');
    expect(await renders(t.url, 'role_page')).toBe(before + 2);
    // Mark's ETag is not Emily's page: a 304 only for the page this caller gets.
    const emilyEtag = forEmily.headers.get('etag')!;
    expect((await get(path, mark, { 'If-None-Match': emilyEtag })).status).toBe(200);
    expect((await get(path, ella, { 'If-None-Match': emilyEtag })).status).toBe(304);
  });

  it('renders a page over a dataset that is not cacheable every time, with no ETag', async () => {
    const path = `${t.url}${P}/dashboards/dice_page/results`;
    const before = await renders(t.url, 'dice_page');
    const first = await get(path);
    const second = await get(path);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('etag')).toBeNull();
    expect(second.body.equals(first.body)).toBe(false);
    expect(await renders(t.url, 'dice_page')).toBe(before + 2);
    expect(await answered(t.url, 'dice_page', 'uncacheable')).toBeGreaterThanOrEqual(2);
  });

  it('reads a dashboard’s datasets through the results cache: the HTTP read of the same selections is its entry', async () => {
    const ran = () => executions(t.server, 'expenses_by_month').length;
    const data = await api.get(`${P}/datasets/expenses_by_month/results?start_date=2024-05-01`);
    expect(data.status).toBe(200);
    const queries = ran();
    const hits = await counter(
      t.url,
      'drey_result_cache_requests_total',
      'dataset="expenses_by_month",outcome="memory"',
    );
    const page = await get(`${t.url}${P}/dashboards/expenses_report/results?start_date=2024-05-01`);
    expect(page.status).toBe(200);
    expect(page.body.toString()).toContain('<dt>Start Date</dt><dd>2024-05-01</dd>');
    expect(ran()).toBe(queries);
    expect(
      await counter(
        t.url,
        'drey_result_cache_requests_total',
        'dataset="expenses_by_month",outcome="memory"',
      ),
    ).toBe(hits + 1);
  });

  it('keys by the build: after a new build the page is rendered again, on it', async () => {
    const path = `${t.url}${P}/dashboards/expenses_report/results?start_date=2024-06-01`;
    const buildOf = async () =>
      (await api.get('/health/ready')).body.checks.environment.build as string;
    const oldBuild = await buildOf();
    await get(path);
    const before = await renders(t.url, 'expenses_report');
    expect((await get(path)).status).toBe(200);
    expect(await renders(t.url, 'expenses_report')).toBe(before);
    expect((await api.request('POST', `${P}/build`, { token: admin })).status).toBe(200);
    const newBuild = await until(buildOf, (build) => build !== oldBuild);
    expect(newBuild).not.toBe(oldBuild);
    expect((await get(path)).status).toBe(200);
    expect(await renders(t.url, 'expenses_report')).toBe(before + 1);
    const rendered = t.server.logs.filter(
      (line) => line.msg === 'dashboard rendered' && line.dashboard === 'expenses_report',
    );
    expect(String(rendered.at(-1)?.key)).toMatch(new RegExp(`^${newBuild}:dashboard:`));
    expect(String(rendered.at(-2)?.key)).toMatch(new RegExp(`^${oldBuild}:dashboard:`));
  });
});
