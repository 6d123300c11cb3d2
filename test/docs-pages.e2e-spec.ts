import type { Browser, Page } from 'playwright-core';
import { P } from './support/api';
import { launchBrowser, textsOf, withText } from './support/browser';
import { TestServer, startServer } from './support/server';

const DATE_RANGE_RESULTS = 'dataset_expenses_grouped_results';

/** What a page logs that a person would see in the console: warnings and errors. */
function recordConsole(page: Page): string[] {
  const said: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'warning' || message.type() === 'error') said.push(message.text());
  });
  return said;
}

/** The icons a page's HTML links, resolved against its URL as a browser resolves them. */
function iconsOf(html: string, pageUrl: string): string[] {
  return [...html.matchAll(/<link\b[^>]*\brel=["']icon["'][^>]*>/g)].map((link) => {
    const href = /\bhref=["']([^"']+)["']/.exec(link[0])?.[1] ?? '';
    return new URL(href, pageUrl).href;
  });
}

/**
 * The documentation pages as a new user meets them (issue 40, point 10): every icon they link answers,
 * Swagger UI's Authorize dialog says nothing of scopes the service has none of, "Try it out" on a date range
 * logs no warning, summaries carry no raw Markdown, the sections start with the project and signing in
 * (not `admin`), ReDoc's introduction promises no button it lacks, and `/health` and `/favicon.ico` answer.
 */
describe('Swagger UI and ReDoc as a new user meets them', () => {
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startServer(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it.each(['/docs', '/docs/', `${P}/docs`, `${P}/docs/`, '/redoc', `${P}/redoc`])(
    '%s links an icon that answers',
    async (path) => {
      const page = `${t.url}${path}`;
      const icons = iconsOf(await (await fetch(page)).text(), page);
      expect(icons.length).toBeGreaterThan(0);
      for (const icon of icons) {
        const reply = await fetch(icon);
        expect([icon, reply.status, reply.headers.get('content-type')]).toEqual([
          icon,
          200,
          'image/png',
        ]);
      }
    },
  );

  it('answers /favicon.ico with an icon, cached, and 304 for a client that holds it', async () => {
    const reply = await fetch(`${t.url}/favicon.ico`);
    expect([reply.status, reply.headers.get('content-type')]).toEqual([200, 'image/png']);
    const bytes = Buffer.from(await reply.arrayBuffer());
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    const etag = reply.headers.get('etag') as string;
    expect(reply.headers.get('cache-control')).toBe('public, max-age=86400');
    const again = await fetch(`${t.url}/favicon.ico`, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
  });

  it('answers /health as /health/ready', async () => {
    const [health, ready] = await Promise.all(
      ['/health', '/health/ready'].map((path) => fetch(`${t.url}${path}`)),
    );
    expect([health.status, ready.status]).toEqual([200, 200]);
    const [a, b] = (await Promise.all([health.json(), ready.json()])) as { status: string }[];
    expect(a.status).toBe('ready');
    expect(Object.keys(a)).toEqual(Object.keys(b));
  });

  it("Swagger UI's Authorize dialog says nothing of scopes", async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/docs`);
    await page.click('button.authorize');
    await page.waitForSelector('#oauth_username');
    const dialog = await page.innerText('.modal-ux');
    expect(dialog).toContain('login (OAuth2, password)');
    expect(dialog).not.toMatch(/scope/i);
    await page.close();
  });

  it('"Try it out" on a dataset with a date range logs no warning', async () => {
    const page = await browser.newPage();
    const said = recordConsole(page);
    await page.goto(`${t.url}/docs`);
    await page.waitForSelector('.opblock');
    // Swagger UI escapes the parentheses of the tag into the block's id: found by its operation id.
    const block = page.locator(`.opblock[id$="-${DATE_RANGE_RESULTS}"]`);
    await block.locator('.opblock-summary-control').click();
    await block.locator('.try-out__btn').click();
    await block.locator('.execute').waitFor();
    // The range's two dates, each typed in an input of its own.
    const range = block.locator('[data-param-name="date_range"]');
    await range.locator('button.json-schema-form-item-add').click();
    await range.locator('button.json-schema-form-item-add').click();
    expect(await range.locator('input').count()).toBe(2);
    expect(said.filter((text) => !text.startsWith('[DOM]'))).toEqual([]);
    await page.close();
  });

  it('lists the sections from the project and signing in, with summaries in plain text', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/docs`);
    await page.waitForSelector('.opblock-tag');
    const sections = (await textsOf(page, '.opblock-tag')).map((text) => text.split('\n')[0]);
    expect(sections.slice(0, 2)).toEqual(['project', 'authentication']);
    expect(sections.indexOf('admin')).toBeGreaterThan(sections.indexOf('dashboards'));
    expect(sections[sections.length - 1]).toBe('legacy');
    const summaries = await textsOf(page, '.opblock-summary-description');
    expect(summaries.length).toBeGreaterThan(20);
    expect(summaries.filter((summary) => summary.includes('`'))).toEqual([]);
    await page.close();

    const document = (await (await fetch(`${t.url}/docs-json`)).json()) as {
      tags: { name: string }[];
      paths: Record<string, Record<string, { summary?: string; description?: string }>>;
    };
    expect(document.tags.map((tag) => tag.name)).toEqual(sections);
    // The Markdown is kept where it is rendered: the description.
    const ready = document.paths['/health/ready'].get;
    expect(ready.summary).not.toContain('`');
    expect(ready.description).toContain('`degraded`');
  });

  it("ReDoc's introduction names the Authorize button as Swagger UI's, and ReDoc has none", async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/redoc`);
    await page.waitForSelector(withText('h1', 'Drey: Expenses'));
    const text = await page.innerText('body');
    const mentions = text.split(/(?<=\.)\s/).filter((sentence) => sentence.includes('Authorize'));
    expect(mentions.length).toBeGreaterThan(0);
    for (const sentence of mentions) expect(sentence).toContain('Swagger UI');
    expect(await page.locator('button', { hasText: 'Authorize' }).count()).toBe(0);
    await page.close();
  });
});
