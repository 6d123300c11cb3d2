import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ElementHandle, HTTPResponse, Page } from 'puppeteer-core';
import { Api, P } from './support/api';
import {
  ResponseRecord,
  STUDIO_PATH,
  launchBrowser,
  recordResponses,
  serveClients,
  sharedDir,
  step,
  textsOf,
} from './support/clients';
import { MONTHLY } from './support/figures';
import { ADMIN_PASSWORD, TestServer, startServer } from './support/server';

/**
 * The two real browser clients in ../shared/clients, unmodified, against the built service in Chromium:
 * Squirrels Studio v1 (current layout) and the 0.4 testing UI (legacy layout). Figures on screen are
 * checked against ../shared/data/README.md.
 */

jest.setTimeout(120_000);

// Globals of the functions that run in the page: the tests' own lib has no DOM.
interface PageNode {
  textContent: string | null;
}
declare const document: {
  querySelector(selector: string): PageNode | null;
  querySelectorAll(selector: string): ArrayLike<PageNode>;
};
declare const sessionStorage: { getItem(key: string): string | null };
declare const navigator: { clipboard: { readText(): Promise<string> } };

// ../shared/data/README.md: totals by category.
const BY_CATEGORY: [string, number][] = [
  ['Bills', 6419.37],
  ['Entertainment', 6916.87],
  ['Food', 4622.55],
  ['Shopping', 8061.49],
  ['Transportation', 4205.88],
];

/** Rows of a CSV file of the shared data (quoted, no commas inside values). */
function csv(file: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(join(sharedDir(), 'data', 'expenses', file), 'utf8')
    .trim()
    .split(/\r?\n/)
    .map((line) => line.split(',').map((cell) => cell.replace(/^"|"$/g, '')));
  return lines.map((cells) => Object.fromEntries(header.map((name, i) => [name, cells[i]])));
}

/** Table rows as text cells. */
function rowsOf(page: Page, table: string): Promise<string[][]> {
  return page.$$eval(`${table} tbody tr`, (rows) =>
    rows.map((row) =>
      Array.from(
        (row as unknown as { children: ArrayLike<{ textContent: string | null }> }).children,
      ).map((cell) => (cell.textContent ?? '').trim()),
    ),
  );
}

function asFigures(rows: string[][]): [string, number][] {
  return rows.map(([name, value]) => [name, Number(value)]);
}

/** The label-and-widget block of a parameter, found by its label. */
async function widget(page: Page, label: string): Promise<ElementHandle> {
  const handle = await page.waitForSelector(`.widget-label ::-p-text(${label})`);
  const block = await handle!.evaluateHandle((node) =>
    (node as unknown as { closest(s: string): unknown }).closest('.widget-label')!,
  );
  const parent = await (block as ElementHandle).evaluateHandle(
    (node) => (node as unknown as { parentElement: unknown }).parentElement,
  );
  return parent as ElementHandle;
}

/** Waits for a response whose URL contains `part` (and that is not a CORS preflight). */
function responseTo(page: Page, part: string, status = 200): Promise<HTTPResponse> {
  return page.waitForResponse(
    (response) =>
      response.url().includes(part) &&
      response.request().method() !== 'OPTIONS' &&
      response.status() === status,
  );
}

async function typeInto(page: Page, selector: string, text: string): Promise<void> {
  const input = await page.waitForSelector(selector);
  await input!.click({ count: 3 });
  await input!.type(text);
}

function noServerErrors(records: ResponseRecord[]): void {
  expect(records.length).toBeGreaterThan(0);
  expect(records.filter((record) => record.status >= 500)).toEqual([]);
}

describe('real browser clients', () => {
  let t: TestServer;
  let api: Api;
  let clients: { url: string; close(): Promise<void> };
  let chromium: Awaited<ReturnType<typeof launchBrowser>>;

  beforeAll(async () => {
    // The static server's port is needed for CORS before the service starts: reserve it first.
    clients = await serveClients(() => t.url);
    t = await startServer({ CORS_ORIGINS: clients.url });
    api = new Api(t.url);
    chromium = await launchBrowser();
  });
  afterAll(async () => {
    await chromium?.close();
    await clients?.close();
    await t?.close();
  });

  describe('Squirrels Studio v1', () => {
    let page: Page;
    let responses: ResponseRecord[];
    const studio = () => `${clients.url}${STUDIO_PATH}`;
    const run = <T>(name: string, body: () => Promise<T>) => step(page, `studio-${name}`, body);
    const menu = async (item: string) => {
      await page.click('.header-buttons button::-p-text(Menu)');
      const entry = await page.waitForSelector(`.menu-item::-p-text(${item})`);
      await entry!.click();
    };
    const login = async (username: string, password: string) => {
      await typeInto(page, '#username', username);
      await typeInto(page, '#password', password);
      await page.click('.login-button');
      await page.waitForSelector(`.auth-container ::-p-text(Logged in as "${username}")`);
    };

    beforeAll(async () => {
      page = await chromium.browser.newPage();
      responses = recordResponses(page);
      // The token dialog asks to copy the token before it closes.
      await chromium.browser
        .defaultBrowserContext()
        .overridePermissions(clients.url, ['clipboard-read', 'clipboard-sanitized-write']);
      // Deleting a user or a token asks for confirmation.
      page.on('dialog', (dialog) => void dialog.accept());
    });
    afterAll(async () => {
      await page?.close();
    });

    it('connects from the project configuration page (service_version 0.5)', () =>
      run('connect', async () => {
        await page.goto(studio());
        await typeInto(page, '#hostname', t.url);
        await typeInto(page, '#projectName', 'expenses');
        await typeInto(page, '#projectVersion', 'v1');
        const metadata = responseTo(page, P);
        await page.click('.connect-button');
        expect((await (await metadata).json()).service_version).toMatch(/^0\.5\./);
        await page.waitForSelector('.login-page #username');
        expect(page.url()).toContain('#/login?');
      }));

    it("opens the login page's ReDoc link: the document drawn with nothing loaded from elsewhere", () =>
      run('redoc', async () => {
        const links = await page.$$eval('.api-docs-buttons a', (anchors) =>
          anchors.map((anchor) => (anchor as unknown as { href: string }).href),
        );
        const href = links.find((link) => link.endsWith('/redoc')) ?? '';
        expect(href).toBe(`${t.url}${P}/redoc`);
        const docs = await chromium.browser.newPage();
        try {
          const requests: string[] = [];
          docs.on('request', (request) => void requests.push(request.url()));
          await docs.goto(href);
          const title = (await api.get(`${P}/docs-json`)).body.info.title as string;
          await docs.waitForSelector(`h1 ::-p-text(${title})`);
          await docs.waitForSelector('::-p-text(query-models)');
          const elsewhere = requests.filter(
            (url) =>
              !url.startsWith(`${t.url}/`) && !url.startsWith('data:') && !url.startsWith('blob:'),
          );
          expect(elsewhere).toEqual([]);
          expect(requests).toContain(`${t.url}${P}/docs-json`);
        } finally {
          await docs.close();
        }
      }));

    it('explores as a guest: public datasets, monthly totals, paging', () =>
      run('guest', async () => {
        await page.click('.guest-button');
        await page.waitForSelector('.auth-container ::-p-text(Exploring as Guest)');
        await page.waitForSelector('#dataset-select option');
        expect(await textsOf(page, '#dataset-select option')).toEqual([
          'Expenses by Month',
          'Orders Summary',
          'Order Details',
        ]);
        await page.waitForSelector('.widget-label ::-p-text(Start Date)');
        const results = responseTo(page, '/datasets/expenses_by_month/results');
        await page.click('.left-container-footer button');
        await results;
        await page.waitForSelector('.table-content tbody td');
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(MONTHLY);
        expect(await textsOf(page, '.pagination-text')).toEqual(['Page 1 of 1']);

        // Five rows per page: three pages, each fetched with x_offset and x_limit.
        await page.click('.header-buttons button::-p-text(Menu)');
        await typeInto(page, '#rows-per-page', '5');
        await page.click('#header-container');
        const first = responseTo(page, 'x_limit=5');
        await page.click('.left-container-footer button');
        expect((await (await first).json()).total_num_rows).toBe(12);
        await page.waitForSelector('.pagination-text ::-p-text(Page 1 of 3)');
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(MONTHLY.slice(0, 5));
        const second = responseTo(page, 'x_offset=5&x_limit=5');
        await page.click('.pagination-link::-p-text(next)');
        await second;
        await page.waitForSelector('.pagination-text ::-p-text(Page 2 of 3)');
        await page.waitForFunction(
          (month) => document.querySelector('.table-content tbody td')?.textContent === month,
          {},
          MONTHLY[5][0],
        );
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(MONTHLY.slice(5, 10));
        await page.click('.pagination-link::-p-text(last)');
        await page.waitForSelector('.pagination-text ::-p-text(Page 3 of 3)');
        await page.waitForFunction(
          () => document.querySelectorAll('.table-content tbody tr').length === 2,
        );
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(MONTHLY.slice(10));
        await page.click('.pagination-link::-p-text(first)');
        await page.waitForSelector('.pagination-text ::-p-text(Page 1 of 3)');
        await page.waitForFunction(
          () => document.querySelectorAll('.table-content tbody tr').length === 5,
        );
      }));

    it('signs in as the administrator', () =>
      run('login', async () => {
        await menu('Login');
        await page.waitForSelector('.login-page #username');
        await login('admin', ADMIN_PASSWORD);
        await page.waitForSelector('#data-type-select option[value=model]');
        await page.waitForSelector('#dataset-select option[value=expense_transactions]');
      }));

    it('manages users: create, edit, delete', () =>
      run('users', async () => {
        await menu('Manage Users');
        await page.waitForSelector('.users-table tbody td ::-p-text(admin)');
        expect(await textsOf(page, '.users-table thead th')).toEqual([
          'Username',
          'Admin',
          'role',
          'Actions',
        ]);
        const create = async (username: string, password: string) => {
          await page.click('.header-actions button::-p-text(Create User)');
          await typeInto(page, '.user-modal #username', username);
          await typeInto(page, '.user-modal #password', password);
          const created = responseTo(page, `${P}/users`);
          await page.click('.user-modal button[type=submit]');
          const sent = JSON.parse((await created).request().postData() ?? '{}') as object;
          await page.waitForSelector(`.users-table td ::-p-text(${username})`);
          return sent;
        };
        // The Studio sends its form state along (`__prev__username`...): the service ignores it.
        const sent = await create('mia', 'mia-first-pass');
        expect(Object.keys(sent)).toEqual(expect.arrayContaining(['__prev__username', 'role']));
        await page.waitForSelector('.success-message ::-p-text(User created successfully)');
        const users = async () =>
          Object.fromEntries(
            (await rowsOf(page, '.users-table')).map(([name, admin, role]) => [
              name,
              `${admin}/${role}`,
            ]),
          );
        expect(await users()).toEqual({ admin: 'Yes/employee', mia: 'No/employee' });

        const miaRow = await page.waitForSelector('.users-table tr ::-p-text(mia)');
        const edit = await miaRow!.evaluateHandle((cell) =>
          (cell as unknown as { closest(s: string): { querySelector(s: string): unknown } })
            .closest('tr')
            .querySelector('.edit-button'),
        );
        await (edit as ElementHandle).click();
        await page.waitForSelector('.user-modal #edit-role');
        await page.select('.user-modal #edit-role', 'manager');
        const updated = responseTo(page, `${P}/users/mia`);
        await page.click('.user-modal button[type=submit]');
        await updated;
        await page.waitForSelector('.success-message ::-p-text(User updated successfully)');
        await page.waitForFunction(() =>
          Array.from(document.querySelectorAll('.users-table tr')).some(
            (row) => row.textContent?.startsWith('miaNomanager') ?? false,
          ),
        );
        expect(await users()).toEqual({ admin: 'Yes/employee', mia: 'No/manager' });

        await create('leo', 'leo-pass-1');
        const leoRow = await page.waitForSelector('.users-table tr ::-p-text(leo)');
        const remove = await leoRow!.evaluateHandle((cell) =>
          (cell as unknown as { closest(s: string): { querySelector(s: string): unknown } })
            .closest('tr')
            .querySelector('.delete-button'),
        );
        const deleted = responseTo(page, `${P}/users/leo`);
        await (remove as ElementHandle).click();
        await deleted;
        await page.waitForSelector('.success-message ::-p-text(User deleted successfully)');
        await page.waitForFunction(
          () => document.querySelectorAll('.users-table tbody tr').length === 2,
        );
        // What the screen says is what the service holds.
        const admin = await api.adminToken();
        const listed = (await api.get(`${P}/users`, admin)).body as Record<string, unknown>[];
        expect(listed).toEqual([
          { username: 'admin', is_admin: true, role: 'employee' },
          { username: 'mia', is_admin: false, role: 'manager' },
        ]);
        await page.click('.header-actions button::-p-text(Back to Explorer)');
        await page.waitForSelector('#data-type-select');
      }));

    it('lists the data models by type and queries them', () =>
      run('models', async () => {
        await page.select('#data-type-select', 'model');
        await page.waitForSelector('.model-explorer .model-name');
        const sections = await page.$$eval('.model-type-section', (nodes) =>
          nodes.map((node) => {
            const section = node as unknown as {
              querySelector(s: string): { textContent: string | null };
              querySelectorAll(s: string): ArrayLike<{ textContent: string | null }>;
            };
            return [
              section.querySelector('h3').textContent,
              Array.from(section.querySelectorAll('.model-name')).map((n) => n.textContent),
            ];
          }),
        );
        const catalog = (await api.get(`${P}/data-catalog`, await api.adminToken())).body as {
          models: { name: string; model_type: string }[];
        };
        const byType = (type: string) =>
          catalog.models.filter((m) => m.model_type === type).map((m) => m.name);
        expect(sections).toEqual(
          ['seed', 'source', 'build', 'dbview', 'federate'].map((type) => [
            `${type.toUpperCase()} MODELS`,
            byType(type),
          ]),
        );
        expect(byType('seed')).toEqual(
          expect.arrayContaining(['expenses', 'categories', 'subcategories']),
        );
        expect(byType('federate')).toContain('expenses_by_month');

        await page.click('.cm-content');
        await page.keyboard.type(
          'select category, sum(amount) as total from expense_details group by 1 order by 1',
        );
        const query = responseTo(page, '/query-models?');
        await page.click('.run-query-button');
        expect((await query).request().method()).toBe('GET');
        await page.waitForSelector('.table-content tbody td');
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(BY_CATEGORY);
      }));

    it('draws the lineage of every model, dataset and dashboard', () =>
      run('lineage', async () => {
        await page.select('#data-type-select', 'lineage');
        await page.waitForSelector('.react-flow__node');
        const catalog = (await api.get(`${P}/data-catalog`, await api.adminToken())).body;
        const expected = new Set<string>();
        for (const edge of catalog.lineage as {
          source: { name: string };
          target: { name: string };
        }[]) {
          expected.add(edge.source.name);
          expected.add(edge.target.name);
        }
        for (const model of catalog.models) expect(expected.has(model.name)).toBe(true);
        await page.waitForFunction(
          (count) => document.querySelectorAll('.react-flow__edge').length === count,
          {},
          catalog.lineage.length,
        );
        const nodes = await textsOf(page, '.react-flow__node');
        expect(nodes.sort()).toEqual(
          [
            ...catalog.models.map((m: { name: string }) => m.name),
            ...catalog.datasets.map((d: { name: string }) => d.name),
            ...catalog.dashboards.map((d: { name: string }) => d.name),
          ].sort(),
        );
      }));

    it('renders both dashboards: PNG and HTML', () =>
      run('dashboards', async () => {
        await page.select('#data-type-select', 'dashboard');
        await page.waitForFunction(
          () =>
            (document.querySelector('#dataset-select') as unknown as { value: string } | null)
              ?.value === 'expenses_dashboard',
        );
        await page.waitForSelector('.widget-label ::-p-text(Date Range)');
        const png = responseTo(page, '/dashboards/expenses_dashboard/results');
        await page.click('.left-container-footer button');
        expect((await png).headers()['content-type']).toBe('image/png');
        const image = await page.waitForSelector('#right-container img[src^="data:image/png"]');
        await page.waitForFunction(
          (img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete,
          {},
          image,
        );
        const size = await image!.evaluate((img) => [
          (img as unknown as { naturalWidth: number }).naturalWidth,
          (img as unknown as { naturalHeight: number }).naturalHeight,
        ]);
        expect(size[0]).toBeGreaterThan(300);
        expect(size[1]).toBeGreaterThan(300);

        await page.select('#dataset-select', 'expenses_report');
        await page.waitForSelector('.widget-label ::-p-text(Start Date)');
        const html = responseTo(page, '/dashboards/expenses_report/results');
        await page.click('.left-container-footer button');
        expect((await html).headers()['content-type']).toMatch(/^text\/html/);
        const frameHandle = await page.waitForSelector('#right-container iframe');
        const frame = await frameHandle!.contentFrame();
        await frame.waitForSelector('body ::-p-text(Monthly totals)');
        const text = await frame.$eval(
          'body',
          (body) => (body as unknown as { innerText: string }).innerText,
        );
        expect(text).toContain('30,226.16');
        for (const [, total] of MONTHLY) {
          expect(text).toContain(total.toLocaleString('en-US', { minimumFractionDigits: 2 }));
        }
      }));

    it('creates, uses and deletes an API token', () =>
      run('tokens', async () => {
        await menu('User Settings');
        await page.waitForSelector('#token_description');
        await typeInto(page, '#token_description', 'studio-ci');
        const created = responseTo(page, `${P}/tokens`);
        await page.click('.create-token-button');
        const token = (await (await created).json()).access_token as string;
        await page.waitForSelector(`.token-modal ::-p-text(${token.slice(0, 20)})`);
        expect((await api.get(`${P}/me`, token)).body.username).toBe('admin');
        // The modal closes only once the token is copied: copy it, and read the clipboard back.
        await page.click('.token-modal .copy-button');
        await page.waitForSelector('.token-copied-message');
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
        await page.click('.token-modal-actions .blue-button:not([disabled])');
        await page.waitForSelector('.token-modal', { hidden: true });
        await page.waitForSelector('.tokens-table td ::-p-text(studio-ci)');
        const listed = (await rowsOf(page, '.tokens-table')).find(
          ([title]) => title === 'studio-ci',
        );
        // The Studio's default: expires in 90 days, sent as minutes and listed as a date.
        expect(JSON.parse((await created).request().postData() ?? '{}')).toEqual({
          title: 'studio-ci',
          expiry_minutes: 90 * 24 * 60,
        });
        expect(listed?.[2]).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}$/);
        const deleted = page.waitForResponse(
          (r) => r.request().method() === 'DELETE' && r.url().includes(`${P}/tokens/`),
        );
        await page.click('.tokens-table .delete-button');
        expect((await deleted).status()).toBe(200);
        await page.waitForSelector('.success-message ::-p-text(Token deleted successfully)');
        expect((await api.get(`${P}/me`, token)).status).toBe(401);
        await page.click('.settings-header button::-p-text(Back to Explorer)');
        await page.waitForSelector('#data-type-select');
      }));

    it('cascades parameters for a manager: group_by → limit, category → subcategory', () =>
      run('cascade', async () => {
        await menu('Logout');
        await page.waitForSelector('.login-page #username');
        await login('mia', 'mia-first-pass');
        await page.waitForSelector('#dataset-select option[value=expenses_grouped]');
        await page.select('#dataset-select', 'expenses_grouped');
        const groupBy = await widget(page, 'Group By');
        const select = (await groupBy.$('select'))!;
        await page.waitForFunction(
          (s) => (s as unknown as { value: string }).value === 'trans',
          {},
          select,
        );
        await widget(page, 'Max Number of Rows');

        // Another grouping hides the row limit (disabled), transactions bring it back.
        let refresh = responseTo(page, 'x_parent_param=group_by');
        await select.select('cat');
        await refresh;
        await page.waitForFunction(
          () =>
            !Array.from(document.querySelectorAll('.widget-label')).some((label) =>
              label.textContent?.includes('Max Number of Rows'),
            ),
        );
        refresh = responseTo(page, 'x_parent_param=group_by');
        await select.select('trans');
        await refresh;
        await widget(page, 'Max Number of Rows');
        refresh = responseTo(page, 'x_parent_param=group_by');
        await select.select('cat');
        await refresh;

        // Categories narrow the subcategories to their own.
        const categories = csv('categories.csv');
        const food = categories.find((c) => c.category === 'Food')!;
        const foodSubcategories = csv('subcategories.csv')
          .filter((s) => s.category_id === food.category_id)
          .map((s) => s.subcategory);
        const optionsOf = async (label: string) => {
          const block = await widget(page, label);
          await (await block.$('.dropdown-heading'))!.click();
          await block.waitForSelector('.dropdown-content .item-renderer');
          const texts = await block.$$eval('.dropdown-content .item-renderer span', (spans) =>
            spans.map((span) => ((span as unknown as PageNode).textContent ?? '').trim()),
          );
          return { block, texts };
        };
        const pick = async (block: ElementHandle, text: string) => {
          for (const item of await block.$$('.dropdown-content .item-renderer')) {
            const label = await item.evaluate((node) => (node as unknown as PageNode).textContent);
            if (label?.trim() === text) return item.click();
          }
          throw new Error(`no option ${text}`);
        };
        const category = await optionsOf('Category Filter');
        expect(category.texts).toEqual(expect.arrayContaining(categories.map((c) => c.category)));
        refresh = responseTo(page, 'x_parent_param=category');
        await pick(category.block, food.category);
        await refresh;
        await page.click('#header-container');
        const subcategory = await optionsOf('Subcategory Filter');
        expect(subcategory.texts.filter((text) => text !== 'Select All').sort()).toEqual(
          foodSubcategories.sort(),
        );
        await page.click('#header-container');

        // Unfiltered totals by category: clear the category again, then apply group_by=cat.
        const again = await optionsOf('Category Filter');
        refresh = responseTo(page, 'x_parent_param=category');
        await pick(again.block, food.category);
        await refresh;
        await page.click('#header-container');
        const results = responseTo(page, '/datasets/expenses_grouped/results?');
        await page.click('.left-container-footer button');
        expect((await results).url()).toContain('group_by=cat');
        await page.waitForSelector('.table-content tbody td');
        const rows = asFigures(await rowsOf(page, '.table-content'));
        expect([...rows].sort()).toEqual(BY_CATEGORY);
      }));

    it('changes the password', () =>
      run('password', async () => {
        await menu('User Settings');
        await typeInto(page, '#current_password', 'mia-first-pass');
        await typeInto(page, '#new_password', 'mia-second-pass');
        await typeInto(page, '#confirm_password', 'mia-second-pass');
        const changed = responseTo(page, `${P}/change-password`);
        await page.click('button::-p-text(Change Password)');
        await changed;
        await page.waitForSelector('.success-message ::-p-text(Password changed successfully)');
        await expect(api.login('mia', 'mia-first-pass')).rejects.toThrow('401');
        expect(await api.login('mia', 'mia-second-pass')).toEqual(expect.any(String));
        await page.click('.settings-header button::-p-text(Back to Explorer)');
        await page.waitForSelector('#data-type-select');
      }));

    it('logs out', () =>
      run('logout', async () => {
        await menu('Logout');
        await page.waitForSelector('.login-page #username');
        expect(page.url()).toContain('#/login?');
        const stored = await page.evaluate(() => sessionStorage.getItem('jwtToken'));
        expect(stored).toBeNull();
      }));

    it('got no 5xx for any request it made', () => {
      noServerErrors(responses);
    });
  });

  describe('Squirrels testing UI 0.4', () => {
    let page: Page;
    let responses: ResponseRecord[];
    const run = <T>(name: string, body: () => Promise<T>) => step(page, `testing-ui-${name}`, body);

    beforeAll(async () => {
      page = await chromium.browser.newPage();
      responses = recordResponses(page);
    });
    afterAll(async () => {
      await page?.close();
    });

    it('loads the project listing and the public catalog', () =>
      run('listing', async () => {
        const listing = responseTo(page, `${t.url}/service-v0`);
        const catalog = responseTo(page, '/service-v0/expenses/v1/data-catalog');
        await page.goto(`${clients.url}/`);
        expect((await (await listing).json()).versions[0].token_path).toBe(
          '/service-v0/expenses/v1/token',
        );
        await catalog;
        await page.waitForSelector('#dataset-select option');
        expect(await textsOf(page, '#dataset-select option')).toEqual([
          'Expenses by Month',
          'Orders Summary',
          'Order Details',
        ]);
      }));

    it("shows a dataset's parameters and its table", () =>
      run('dataset', async () => {
        await page.waitForSelector('.widget-label ::-p-text(Start Date)');
        expect(await textsOf(page, '#left-container .widget-label span')).toEqual([
          'Start Date',
          'End Date',
          'Amounts Greater Than',
          'Amounts Less Than',
        ]);
        const results = responseTo(page, '/service-v0/expenses/v1/dataset/expenses_by_month');
        await page.click('input[type=submit][value=Apply]');
        await results;
        await page.waitForSelector('#table-container tbody td');
        expect(asFigures(await rowsOf(page, '#table-container'))).toEqual(MONTHLY);
      }));

    it('authenticates, then sees the protected datasets and groups by category', () =>
      run('authenticate', async () => {
        await page.click('.auth-container button::-p-text(Authenticate)');
        await typeInto(page, '.modal-content input[name=username]', 'admin');
        await typeInto(page, '.modal-content input[name=password]', ADMIN_PASSWORD);
        const token = responseTo(page, '/service-v0/expenses/v1/token');
        const catalog = responseTo(page, '/service-v0/expenses/v1/data-catalog');
        await page.click('.modal-content button[type=submit]');
        await token;
        await catalog;
        await page.waitForSelector('#dataset-select option[value=expense_transactions]');
        await page.waitForSelector('.auth-container ::-p-text(admin)');
        await page.select('#dataset-select', 'expenses_grouped');
        const groupBy = await widget(page, 'Group By');
        const parameters = responseTo(page, '/dataset/expenses_grouped/parameters?');
        await (await groupBy.$('select'))!.select('cat');
        await parameters;
        const results = responseTo(page, '/service-v0/expenses/v1/dataset/expenses_grouped?');
        await page.click('input[type=submit][value=Apply]');
        expect((await results).url()).toContain('group_by=cat');
        await page.waitForFunction(
          () => document.querySelectorAll('#table-container tbody tr').length === 5,
        );
        expect([...asFigures(await rowsOf(page, '#table-container'))].sort()).toEqual(BY_CATEGORY);
      }));

    it('got no 5xx for any request it made', () => {
      noServerErrors(responses);
    });
  });
});
