import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type {
  Browser,
  BrowserContext,
  ElementHandle,
  Frame,
  Page,
  Response,
} from 'playwright-core';
import { Api, P } from './support/api';
import {
  VIEWPORT,
  launchBrowser,
  recordPolicyRefusals,
  recordResponses,
  serverErrors,
  step,
  textsOf,
  withText,
} from './support/browser';
import { STUDIO_PATH, serveClients, sharedDir } from './support/clients';
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

/** Waits for an element to be in the page, shown or not. */
function present(scope: Page | Frame, selector: string): Promise<ElementHandle> {
  return scope.waitForSelector(selector, { state: 'attached' });
}

/** The element a function run on `handle` in the page returns. */
async function elementFrom(
  handle: ElementHandle,
  find: (node: unknown) => unknown,
): Promise<ElementHandle> {
  const element = (await handle.evaluateHandle(find)).asElement();
  if (!element) throw new Error('no such element');
  return element as ElementHandle;
}

/** The label-and-widget block of a parameter, found by its label. */
async function widget(page: Page, label: string): Promise<ElementHandle> {
  const handle = await present(page, withText('.widget-label', label));
  return elementFrom(
    handle,
    (node) =>
      (node as { closest(s: string): { parentElement: unknown } }).closest('.widget-label')
        .parentElement,
  );
}

/** Waits for a response whose URL contains `part` (and that is not a CORS preflight). */
function responseTo(page: Page, part: string, status = 200): Promise<Response> {
  return page.waitForResponse(
    (response) =>
      response.url().includes(part) &&
      response.request().method() !== 'OPTIONS' &&
      response.status() === status,
  );
}

/** Selects what the field holds and types over it, key by key. */
async function typeInto(page: Page, selector: string, text: string): Promise<void> {
  const input = await present(page, selector);
  await input.click({ clickCount: 3 });
  await input.type(text);
}

function noServerErrors(responses: Response[]): void {
  expect(responses.length).toBeGreaterThan(0);
  expect(serverErrors(responses)).toEqual([]);
}

describe('real browser clients', () => {
  let t: TestServer;
  let api: Api;
  let clients: { url: string; close(): Promise<void> };
  let browser: Browser;
  // One profile for both clients, as one person's browser: they share the static origin's storage.
  let context: BrowserContext;

  beforeAll(async () => {
    // The static server's port is needed for CORS before the service starts: reserve it first.
    clients = await serveClients(() => t.url);
    t = await startServer({ CORS_ORIGINS: clients.url });
    api = new Api(t.url);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: VIEWPORT });
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await clients?.close();
    await t?.close();
  });

  describe('Squirrels Studio v1', () => {
    let page: Page;
    let responses: Response[];
    const studio = () => `${clients.url}${STUDIO_PATH}`;
    const run = <T>(name: string, body: () => Promise<T>) => step(page, `studio-${name}`, body);
    const menu = async (item: string) => {
      await page.click(withText('.header-buttons button', 'Menu'));
      const entry = await present(page, withText('.menu-item', item));
      await entry.click();
    };
    const login = async (username: string, password: string) => {
      await typeInto(page, '#username', username);
      await typeInto(page, '#password', password);
      await page.click('.login-button');
      await present(page, withText('.auth-container', `Logged in as "${username}"`));
    };

    beforeAll(async () => {
      page = await context.newPage();
      responses = recordResponses(page);
      // The token dialog asks to copy the token before it closes.
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
        origin: clients.url,
      });
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
        await present(page, '.login-page #username');
        expect(page.url()).toContain('#/login?');
      }));

    it("opens the login page's ReDoc link: the document drawn with nothing loaded from elsewhere or refused", () =>
      run('redoc', async () => {
        const links = await page.$$eval('.api-docs-buttons a', (anchors) =>
          anchors.map((anchor) => (anchor as unknown as { href: string }).href),
        );
        const href = links.find((link) => link.endsWith('/redoc')) ?? '';
        expect(href).toBe(`${t.url}${P}/redoc`);
        const docs = await context.newPage();
        try {
          const requests: string[] = [];
          docs.on('request', (request) => void requests.push(request.url()));
          const refusals = recordPolicyRefusals(docs);
          await docs.goto(href);
          const title = (await api.get(`${P}/docs-json`)).body.info.title as string;
          await present(docs, withText('h1', title));
          await present(docs, withText('', 'query-models'));
          const elsewhere = requests.filter(
            (url) =>
              !url.startsWith(`${t.url}/`) && !url.startsWith('data:') && !url.startsWith('blob:'),
          );
          expect(elsewhere).toEqual([]);
          expect(requests).toContain(`${t.url}${P}/docs-json`);
          expect(refusals).toEqual([]);
        } finally {
          await docs.close();
        }
      }));

    it('explores as a guest: public datasets, monthly totals, paging', () =>
      run('guest', async () => {
        await page.click('.guest-button');
        await present(page, withText('.auth-container', 'Exploring as Guest'));
        await present(page, '#dataset-select option');
        expect(await textsOf(page, '#dataset-select option')).toEqual(['Expenses by Month']);
        await present(page, withText('.widget-label', 'Start Date'));
        const results = responseTo(page, '/datasets/expenses_by_month/results');
        await page.click('.left-container-footer button');
        await results;
        await present(page, '.table-content tbody td');
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(MONTHLY);
        expect(await textsOf(page, '.pagination-text')).toEqual(['Page 1 of 1']);

        // Five rows per page: three pages, each fetched with x_offset and x_limit.
        await page.click(withText('.header-buttons button', 'Menu'));
        await typeInto(page, '#rows-per-page', '5');
        await page.click('#header-container');
        const first = responseTo(page, 'x_limit=5');
        await page.click('.left-container-footer button');
        expect((await (await first).json()).total_num_rows).toBe(12);
        await present(page, withText('.pagination-text', 'Page 1 of 3'));
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(MONTHLY.slice(0, 5));
        const second = responseTo(page, 'x_offset=5&x_limit=5');
        await page.click(withText('.pagination-link', 'next'));
        await second;
        await present(page, withText('.pagination-text', 'Page 2 of 3'));
        await page.waitForFunction(
          (month) => document.querySelector('.table-content tbody td')?.textContent === month,
          MONTHLY[5][0],
        );
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(MONTHLY.slice(5, 10));
        await page.click(withText('.pagination-link', 'last'));
        await present(page, withText('.pagination-text', 'Page 3 of 3'));
        await page.waitForFunction(
          () => document.querySelectorAll('.table-content tbody tr').length === 2,
        );
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(MONTHLY.slice(10));
        await page.click(withText('.pagination-link', 'first'));
        await present(page, withText('.pagination-text', 'Page 1 of 3'));
        await page.waitForFunction(
          () => document.querySelectorAll('.table-content tbody tr').length === 5,
        );
      }));

    it('signs in as the administrator', () =>
      run('login', async () => {
        await menu('Login');
        await present(page, '.login-page #username');
        await login('admin', ADMIN_PASSWORD);
        await present(page, '#data-type-select option[value=model]');
        await present(page, '#dataset-select option[value=expense_transactions]');
      }));

    it('manages users: create, edit, delete', () =>
      run('users', async () => {
        await menu('Manage Users');
        await present(page, withText('.users-table tbody td', 'admin'));
        // The Studio draws the table with the users, then adds a column per user field once it has read
        // them: on CI's busy machine the header was once read in between.
        await present(page, withText('.users-table thead th', 'role'));
        expect(await textsOf(page, '.users-table thead th')).toEqual([
          'Username',
          'Admin',
          'role',
          'Actions',
        ]);
        const create = async (username: string, password: string) => {
          await page.click(withText('.header-actions button', 'Create User'));
          await typeInto(page, '.user-modal #username', username);
          await typeInto(page, '.user-modal #password', password);
          const created = responseTo(page, `${P}/users`);
          await page.click('.user-modal button[type=submit]');
          const sent = JSON.parse((await created).request().postData() ?? '{}') as object;
          await present(page, withText('.users-table td', username));
          return sent;
        };
        // The Studio sends its form state along (`__prev__username`...): the service ignores it.
        const sent = await create('mia', 'mia-first-pass');
        expect(Object.keys(sent)).toEqual(expect.arrayContaining(['__prev__username', 'role']));
        await present(page, withText('.success-message', 'User created successfully'));
        const users = async () =>
          Object.fromEntries(
            (await rowsOf(page, '.users-table')).map(([name, admin, role]) => [
              name,
              `${admin}/${role}`,
            ]),
          );
        expect(await users()).toEqual({ admin: 'Yes/employee', mia: 'No/employee' });

        const miaRow = await present(page, withText('.users-table tr', 'mia'));
        const edit = await elementFrom(miaRow, (cell) =>
          (cell as { closest(s: string): { querySelector(s: string): unknown } })
            .closest('tr')
            .querySelector('.edit-button'),
        );
        await edit.click();
        await present(page, '.user-modal #edit-role');
        await page.selectOption('.user-modal #edit-role', 'manager');
        const updated = responseTo(page, `${P}/users/mia`);
        await page.click('.user-modal button[type=submit]');
        await updated;
        await present(page, withText('.success-message', 'User updated successfully'));
        await page.waitForFunction(() =>
          Array.from(document.querySelectorAll('.users-table tr')).some(
            (row) => row.textContent?.startsWith('miaNomanager') ?? false,
          ),
        );
        expect(await users()).toEqual({ admin: 'Yes/employee', mia: 'No/manager' });

        await create('leo', 'leo-pass-1');
        const leoRow = await present(page, withText('.users-table tr', 'leo'));
        const remove = await elementFrom(leoRow, (cell) =>
          (cell as { closest(s: string): { querySelector(s: string): unknown } })
            .closest('tr')
            .querySelector('.delete-button'),
        );
        const deleted = responseTo(page, `${P}/users/leo`);
        await remove.click();
        await deleted;
        await present(page, withText('.success-message', 'User deleted successfully'));
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
        await page.click(withText('.header-actions button', 'Back to Explorer'));
        await present(page, '#data-type-select');
      }));

    it('lists the data models by type and queries them', () =>
      run('models', async () => {
        await page.selectOption('#data-type-select', 'model');
        await present(page, '.model-explorer .model-name');
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
        await present(page, '.table-content tbody td');
        expect(asFigures(await rowsOf(page, '.table-content'))).toEqual(BY_CATEGORY);
      }));

    it('draws the lineage of every model, dataset and dashboard', () =>
      run('lineage', async () => {
        await page.selectOption('#data-type-select', 'lineage');
        await present(page, '.react-flow__node');
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
        await page.selectOption('#data-type-select', 'dashboard');
        await page.waitForFunction(
          () =>
            (document.querySelector('#dataset-select') as unknown as { value: string } | null)
              ?.value === 'expenses_dashboard',
        );
        await present(page, withText('.widget-label', 'Date Range'));
        const png = responseTo(page, '/dashboards/expenses_dashboard/results');
        await page.click('.left-container-footer button');
        expect((await png).headers()['content-type']).toBe('image/png');
        const image = await present(page, '#right-container img[src^="data:image/png"]');
        await page.waitForFunction(
          (img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete,
          image,
        );
        const size = await image.evaluate((img) => [
          (img as unknown as { naturalWidth: number }).naturalWidth,
          (img as unknown as { naturalHeight: number }).naturalHeight,
        ]);
        expect(size[0]).toBeGreaterThan(300);
        expect(size[1]).toBeGreaterThan(300);

        await page.selectOption('#dataset-select', 'expenses_report');
        await present(page, withText('.widget-label', 'Start Date'));
        const html = responseTo(page, '/dashboards/expenses_report/results');
        await page.click('.left-container-footer button');
        expect((await html).headers()['content-type']).toMatch(/^text\/html/);
        const frameHandle = await present(page, '#right-container iframe');
        const frame = await frameHandle.contentFrame();
        if (!frame) throw new Error('the report is not in a frame');
        await present(frame, withText('body', 'Monthly totals'));
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
        await present(page, '#token_description');
        await typeInto(page, '#token_description', 'studio-ci');
        const created = responseTo(page, `${P}/tokens`);
        await page.click('.create-token-button');
        const token = (await (await created).json()).access_token as string;
        await present(page, withText('.token-modal', token.slice(0, 20)));
        expect((await api.get(`${P}/me`, token)).body.username).toBe('admin');
        // The modal closes only once the token is copied: copy it, and read the clipboard back.
        await page.click('.token-modal .copy-button');
        await present(page, '.token-copied-message');
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
        await page.click('.token-modal-actions .blue-button:not([disabled])');
        await page.waitForSelector('.token-modal', { state: 'hidden' });
        await present(page, withText('.tokens-table td', 'studio-ci'));
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
        await present(page, withText('.success-message', 'Token deleted successfully'));
        expect((await api.get(`${P}/me`, token)).status).toBe(401);
        await page.click(withText('.settings-header button', 'Back to Explorer'));
        await present(page, '#data-type-select');
      }));

    it('cascades parameters for a manager: group_by → limit, category → subcategory', () =>
      run('cascade', async () => {
        await menu('Logout');
        await present(page, '.login-page #username');
        await login('mia', 'mia-first-pass');
        await present(page, '#dataset-select option[value=expenses_grouped]');
        await page.selectOption('#dataset-select', 'expenses_grouped');
        const groupBy = await widget(page, 'Group By');
        const select = (await groupBy.$('select'))!;
        await page.waitForFunction(
          (s) => (s as unknown as { value: string }).value === 'trans',
          select,
        );
        await widget(page, 'Max Number of Rows');

        // Another grouping hides the row limit (disabled), transactions bring it back.
        let refresh = responseTo(page, 'x_parent_param=group_by');
        await select.selectOption('cat');
        await refresh;
        await page.waitForFunction(
          () =>
            !Array.from(document.querySelectorAll('.widget-label')).some((label) =>
              label.textContent?.includes('Max Number of Rows'),
            ),
        );
        refresh = responseTo(page, 'x_parent_param=group_by');
        await select.selectOption('trans');
        await refresh;
        await widget(page, 'Max Number of Rows');
        refresh = responseTo(page, 'x_parent_param=group_by');
        await select.selectOption('cat');
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
          await block.waitForSelector('.dropdown-content .item-renderer', { state: 'attached' });
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
        await present(page, '.table-content tbody td');
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
        await page.click(withText('button', 'Change Password'));
        await changed;
        await present(page, withText('.success-message', 'Password changed successfully'));
        await expect(api.login('mia', 'mia-first-pass')).rejects.toThrow('401');
        expect(await api.login('mia', 'mia-second-pass')).toEqual(expect.any(String));
        await page.click(withText('.settings-header button', 'Back to Explorer'));
        await present(page, '#data-type-select');
      }));

    it('logs out', () =>
      run('logout', async () => {
        await menu('Logout');
        await present(page, '.login-page #username');
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
    let responses: Response[];
    const run = <T>(name: string, body: () => Promise<T>) => step(page, `testing-ui-${name}`, body);

    beforeAll(async () => {
      page = await context.newPage();
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
        await present(page, '#dataset-select option');
        expect(await textsOf(page, '#dataset-select option')).toEqual(['Expenses by Month']);
      }));

    it("shows a dataset's parameters and its table", () =>
      run('dataset', async () => {
        await present(page, withText('.widget-label', 'Start Date'));
        expect(await textsOf(page, '#left-container .widget-label span')).toEqual([
          'Start Date',
          'End Date',
          'Amounts Greater Than',
          'Amounts Less Than',
        ]);
        const results = responseTo(page, '/service-v0/expenses/v1/dataset/expenses_by_month');
        await page.click('input[type=submit][value=Apply]');
        await results;
        await present(page, '#table-container tbody td');
        expect(asFigures(await rowsOf(page, '#table-container'))).toEqual(MONTHLY);
      }));

    it('authenticates, then sees the protected datasets and groups by category', () =>
      run('authenticate', async () => {
        await page.click(withText('.auth-container button', 'Authenticate'));
        await typeInto(page, '.modal-content input[name=username]', 'admin');
        await typeInto(page, '.modal-content input[name=password]', ADMIN_PASSWORD);
        const token = responseTo(page, '/service-v0/expenses/v1/token');
        const catalog = responseTo(page, '/service-v0/expenses/v1/data-catalog');
        await page.click('.modal-content button[type=submit]');
        await token;
        await catalog;
        await present(page, '#dataset-select option[value=expense_transactions]');
        await present(page, withText('.auth-container', 'admin'));
        await page.selectOption('#dataset-select', 'expenses_grouped');
        const groupBy = await widget(page, 'Group By');
        const parameters = responseTo(page, '/dataset/expenses_grouped/parameters?');
        await (await groupBy.$('select'))!.selectOption('cat');
        await parameters;
        const results = responseTo(page, '/service-v0/expenses/v1/dataset/expenses_grouped?');
        await page.click('input[type=submit][value=Apply]');
        expect((await results).url()).toContain('group_by=cat');
        await page.waitForFunction(
          () => document.querySelectorAll('#table-container tbody tr').length === 5,
        );
        expect([...asFigures(await rowsOf(page, '#table-container'))].sort()).toEqual(BY_CATEGORY);
      }));

    it('renders both dashboards: HTML in a frame, PNG as an image', () =>
      run('dashboards', async () => {
        const catalog = responseTo(page, '/service-v0/expenses/v1/data-catalog');
        await page.selectOption('#is-dashboard-select', 'dashboard');
        await catalog;
        await present(page, '#dataset-select option[value=expenses_dashboard]');
        expect(await textsOf(page, '#dataset-select option')).toEqual([
          'Expenses Dashboard',
          'Expenses Report',
        ]);

        await page.selectOption('#dataset-select', 'expenses_report');
        await present(page, withText('.widget-label', 'Start Date'));
        const html = responseTo(page, '/service-v0/expenses/v1/dashboard/expenses_report');
        await page.click('input[type=submit][value=Apply]');
        expect((await html).headers()['content-type']).toMatch(/^text\/html/);
        const frame = await (await present(page, '#table-container iframe')).contentFrame();
        if (!frame) throw new Error('the report is not in a frame');
        await present(frame, withText('body', 'Monthly totals'));
        const text = await frame.$eval(
          'body',
          (body) => (body as unknown as { innerText: string }).innerText,
        );
        for (const [, total] of MONTHLY) {
          expect(text).toContain(total.toLocaleString('en-US', { minimumFractionDigits: 2 }));
        }

        await page.selectOption('#dataset-select', 'expenses_dashboard');
        await present(page, withText('.widget-label', 'Date Range'));
        const png = responseTo(page, '/service-v0/expenses/v1/dashboard/expenses_dashboard');
        await page.click('input[type=submit][value=Apply]');
        expect((await png).headers()['content-type']).toBe('image/png');
        const image = await present(page, '#table-container img[src^="data:image/png"]');
        await page.waitForFunction(
          (img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth > 0,
          image,
        );
        const width = await image.evaluate(
          (img) => (img as unknown as { naturalWidth: number }).naturalWidth,
        );
        expect(width).toBeGreaterThan(300);
      }));

    it('got no 5xx for any request it made', () => {
      noServerErrors(responses);
    });
  });
});
