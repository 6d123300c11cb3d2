import { Api, L, P } from './support/api';
import { averageHash, decodePng, hashDistance, pngHeader } from './support/png';
import { TestServer, startServer } from './support/server';

/** Monthly totals of the example data (../shared/data/README.md), newest first. */
const MONTHLY = [
  '2124.97', '2664.21', '2320.80', '2286.26', '2546.27', '2305.00',
  '2597.63', '2799.68', '2316.73', '3248.50', '2531.68', '2484.43',
]; // prettier-ignore

interface Bytes {
  status: number;
  type: string;
  body: Buffer;
  text: string;
  headers: Headers;
}

/** Dashboards answer bytes (PNG) or HTML; the JSON helpers of Api read text only. */
async function fetchBytes(
  url: string,
  options: { token?: string; method?: string; json?: unknown } = {},
): Promise<Bytes> {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(url, {
    method: options.method ?? 'GET',
    headers,
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
  });
  const body = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    body,
    text: body.toString('utf8'),
    headers: response.headers,
  };
}

/** The numbers of the table cells, without thousands separators. */
function tableFigures(html: string): string[] {
  return [...html.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1].replace(/,/g, ''));
}

describe('dashboards over HTTP', () => {
  let t: TestServer;
  let api: Api;
  let employee: string;
  const get = (path: string, token?: string) => fetchBytes(`${t.url}${path}`, { token });

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    const admin = await api.adminToken();
    employee = await api.userToken(admin, 'emily', { role: 'employee' });
    for (let i = 0; i < 200 && (await api.get('/health/ready')).status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(async () => {
    await t.close();
  });

  describe('content types and scopes', () => {
    it('the public HTML report opens without a token, in both layouts, by GET and POST', async () => {
      for (const path of [
        `${P}/dashboards/expenses_report/results`,
        `${L}/dashboard/expenses_report`,
        `${L}/dashboard/expenses-report`,
      ]) {
        const reply = await get(path);
        expect([path, reply.status, reply.type]).toEqual([path, 200, 'text/html; charset=utf-8']);
        expect(reply.text).toMatch(/^<!doctype html>/);
      }
      const posted = await fetchBytes(`${t.url}${P}/dashboards/expenses_report/results`, {
        method: 'POST',
        json: { start_date: '2024-07-01' },
      });
      expect(posted.status).toBe(200);
      expect(posted.type).toBe('text/html; charset=utf-8');
      expect(posted.headers.get('cache-control')).toBe('private, no-cache');
    });

    it('the protected PNG dashboard needs a signed-in user: 401 in each layout’s shape, then 200 image/png', async () => {
      const current = await api.get(`${P}/dashboards/expenses_dashboard/results`);
      expect(current.status).toBe(401);
      expect(current.headers.get('www-authenticate')).toBe('Bearer');
      expect(current.body).toMatchObject({ statusCode: 401, error: 'authentication_required' });
      const legacy = await api.get(`${L}/dashboard/expenses-dashboard`);
      expect(legacy.status).toBe(401);
      expect(Object.keys(legacy.body)).toEqual(['detail']);

      const png = await get(`${P}/dashboards/expenses_dashboard/results`, employee);
      expect(png.status).toBe(200);
      expect(png.type).toBe('image/png');
      const viaLegacy = await get(`${L}/dashboard/expenses_dashboard`, employee);
      expect(viaLegacy.type).toBe('image/png');
    });

    it('an unknown dashboard is 404 in both layouts’ error shapes; a bad selection is 400', async () => {
      const current = await api.get(`${P}/dashboards/nope/results`);
      expect(current.status).toBe(404);
      expect(current.body).toEqual({
        statusCode: 404,
        error: 'not_found',
        // An anonymous caller is told of the public dashboards only.
        message: 'No dashboard named "nope"; the dashboards you can open are "expenses_report"',
      });
      const legacy = await api.get(`${L}/dashboard/nope`);
      expect(legacy.status).toBe(404);
      expect(legacy.body).toEqual({
        detail: 'No dashboard named "nope"; the dashboards you can open are "expenses_report"',
      });
      const bad = await api.get(`${P}/dashboards/expenses_report/results?start_date=yesterday`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('invalid_parameter_selection');
    });
  });

  describe('the HTML report', () => {
    it('shows the monthly figures of the full year, their total, and the selections', async () => {
      const { text: html } = await get(`${P}/dashboards/expenses_report/results`);
      expect(html).toContain('<title>Expenses Report · Expenses</title>');
      expect(html).toContain('<dt>Start Date</dt><dd>2024-01-01</dd>');
      expect(html).toContain('<dt>End Date</dt><dd>2024-12-31</dd>');
      expect(tableFigures(html)).toEqual([...MONTHLY].reverse().concat('30226.16'));
      expect(html).toContain('<td>Mar 2024</td>');
    });

    it('follows the selections: July to December only', async () => {
      const { text: html } = await get(
        `${P}/dashboards/expenses_report/results?start_date=2024-07-01`,
      );
      expect(html).toContain('<dt>Start Date</dt><dd>2024-07-01</dd>');
      const figures = tableFigures(html);
      expect(figures.slice(0, -1)).toEqual(MONTHLY.slice(0, 6).reverse());
      expect(html).not.toContain('<td>Jun 2024</td>');
    });

    it('is self-contained: Chart.js inline, nothing loaded from outside, a policy that forbids it', async () => {
      const reply = await get(`${P}/dashboards/expenses_report/results`);
      const html = reply.text;
      expect(html).not.toMatch(/(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
      expect(html).not.toContain('src="http');
      expect(html).not.toContain('href="http');
      expect(html).toContain('Chart.js v4');
      expect(html).toContain('<meta http-equiv="Content-Security-Policy"');
      expect(reply.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
      expect(html).toContain('@media print');
    });
  });

  describe('the PNG dashboard', () => {
    const path = `${P}/dashboards/expenses_dashboard/results`;

    it('decodes, 1200 pixels wide and as tall as the page', async () => {
      const { body } = await get(path, employee);
      const header = pngHeader(body);
      expect(header.width).toBe(1200);
      expect(header.height).toBeGreaterThanOrEqual(800);
      expect(header.height).toBeLessThan(4000);
      const image = decodePng(body);
      // Not blank: the picture has dark ink (text, lines) and light background.
      const values = new Set<number>();
      for (let i = 0; i < image.pixels.length; i += 997) values.add(image.pixels[i] >> 4);
      expect(values.size).toBeGreaterThan(4);
    });

    it('different selections give a visibly different image; the same selections the same picture', async () => {
      const all = (await get(path, employee)).body;
      const again = (await get(path, employee)).body;
      const bills = (
        await get(`${path}?category=1&date_range=2024-01-01&date_range=2024-03-31`, employee)
      ).body;
      const [hashAll, hashAgain, hashBills] = [all, again, bills].map((png) =>
        averageHash(decodePng(png)),
      );
      expect(bills.equals(all)).toBe(false);
      expect(hashDistance(hashAll, hashAgain)).toBeLessThanOrEqual(2);
      expect(hashDistance(hashAll, hashBills)).toBeGreaterThan(20);
    });
  });
});
