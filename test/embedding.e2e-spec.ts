import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { Api, L, P, signJwt } from './support/api';
import { launchBrowser } from './support/browser';
import { drey } from './support/drey-cli';
import { ServerProcess, TestServer, startServer } from './support/server';
import { tempDir } from './support/services';

const EMBED_SECRET = 'the-host-application-signs-with-this-secret';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A host application's page on 127.0.0.1: it frames a Drey dashboard, as docs/embedding.md shows. */
async function hostPage(): Promise<{ server: Server; port: number; set: (html: string) => void }> {
  let html = '';
  const server = createServer((_request, response) => {
    response.setHeader('Content-Type', 'text/html; charset=utf-8');
    response.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, set: (next) => (html = next) };
}

/**
 * A token as a host application signs it with EMBED_SECRET: an HS256 JWT made with node:crypto alone, as
 * docs/embedding.md's example server makes it.
 */
function hostToken(
  claims: Record<string, unknown>,
  options: { exp?: number; key?: string } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return Promise.resolve(
    signJwt(
      {
        aud: 'drey-embed',
        iat: now,
        exp: options.exp ?? now + 300,
        project: 'expenses/v1',
        ...claims,
      },
      options.key ?? EMBED_SECRET,
    ),
  );
}

describe('embedding: tokens that open one item with locked parameters', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let host: Awaited<ReturnType<typeof hostPage>>;
  let other: Awaited<ReturnType<typeof hostPage>>;

  beforeAll(async () => {
    host = await hostPage();
    other = await hostPage();
    t = await startServer({
      EMBED_SECRET,
      EMBED_FRAME_ORIGINS: `http://127.0.0.1:${host.port}`,
      EMBED_TOKEN_MAX_MINUTES: '30',
    });
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
    for (const page of [host, other]) {
      page.server.closeAllConnections();
      await new Promise((resolve) => page.server.close(resolve));
    }
  });

  const issue = async (body: Record<string, unknown>) => {
    const reply = await api.request('POST', `${P}/embed-tokens`, { token: admin, json: body });
    expect(reply.status).toBe(201);
    return reply.body as { token: string; id: string; expires_at: string };
  };

  it('an administrator’s token reads its dataset, with its locked values, in both layouts, and nothing else', async () => {
    const { token, id } = await issue({
      dataset: 'expense_transactions',
      params: { category: ['0'] },
      defaults: { description_filter: 'a' },
      subject: 'host-user-42',
      expiry_minutes: 5,
    });
    // The private dataset, as an administrator reads it with the same selections.
    const embedded = await api.get(
      `${P}/datasets/expense_transactions/results?x_limit=1000`,
      token,
    );
    expect(embedded.status).toBe(200);
    const direct = await api.get(
      `${P}/datasets/expense_transactions/results?x_limit=1000&category=0&description_filter=a`,
      admin,
    );
    expect(embedded.body.data).toEqual(direct.body.data);
    expect(embedded.body.data.length).toBeGreaterThan(0);
    expect(
      new Set((embedded.body.data as { category: string }[]).map((row) => row.category)),
    ).toEqual(new Set(['Food']));
    // A default gives way to the request; a locked value does not.
    const other = await api.get(
      `${P}/datasets/expense_transactions/results?x_limit=1000&description_filter=zzz-none`,
      token,
    );
    expect(other.body.data).toEqual([]);
    for (const attempt of [
      () => api.get(`${P}/datasets/expense_transactions/results?category=1`, token),
      () =>
        api.request('POST', `${P}/datasets/expense_transactions/results`, {
          token,
          json: { category: ['1'] },
        }),
      () => api.get(`${P}/datasets/expense_transactions/parameters?x_parent_param=category`, token),
    ]) {
      const refused = await attempt();
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_parameter_selection');
      expect(refused.body.message).toContain('"category" is locked by the embedding token');
    }
    // The legacy layout: the same rows.
    const legacy = await api.get(`${L}/dataset/expense-transactions`, token);
    expect(legacy.status).toBe(200);
    expect(legacy.body.data.length).toBe(embedded.body.data.length);
    expect((await api.get(`${L}/dataset/expense-transactions?category=1`, token)).status).toBe(400);

    // Its parameters: the locked one is no widget, and cascades to its children.
    const parameters = (await api.get(`${P}/datasets/expense_transactions/parameters`, token)).body
      .parameters as { name: string; options?: { id: string }[] }[];
    expect(parameters.map((parameter) => parameter.name)).toEqual([
      'date_range',
      'subcategory',
      'description_filter',
    ]);
    const all = (await api.get(`${P}/datasets/expense_transactions/parameters`, admin)).body
      .parameters as { name: string; options?: { id: string }[] }[];
    const subcategories = (list: typeof all) =>
      list.find((parameter) => parameter.name === 'subcategory')?.options?.length ?? 0;
    expect(subcategories(parameters)).toBeGreaterThan(0);
    expect(subcategories(parameters)).toBeLessThan(subcategories(all));

    // The catalog shows that item alone; every other item is as if it did not exist.
    const catalog = (await api.get(`${P}/data-catalog`, token)).body;
    expect(catalog.datasets.map((dataset: { name: string }) => dataset.name)).toEqual([
      'expense_transactions',
    ]);
    expect(catalog.dashboards).toEqual([]);
    expect(catalog.parameters.map((parameter: { name: string }) => parameter.name)).toEqual([
      'date_range',
      'subcategory',
      'description_filter',
    ]);
    for (const path of [
      `${P}/datasets/expenses_by_month/results`,
      `${P}/datasets/expenses_by_month/parameters`,
      `${P}/dashboards/expenses_report/results`,
      `${L}/dataset/expenses-by-month`,
    ]) {
      expect([path, (await api.get(path, token)).status]).toEqual([path, 404]);
    }
    // Nothing that needs a user, and not the project's parameters.
    for (const path of [`${P}/parameters`, `${P}/tokens`, `${P}/builds`, `${P}/users`]) {
      expect([path, (await api.get(path, token)).status]).toEqual([path, 403]);
    }
    // Audited and counted.
    const audit = (await api.get(`${P}/audit?action=embed_token.create`, admin)).body.events as {
      target: string;
    }[];
    expect(audit.map((event) => event.target)).toContain(id);
    const metrics = (await api.get('/metrics', admin)).text;
    expect(metrics).toMatch(/drey_embed_requests_total\{kind="dataset"\} [1-9]/);
    const lines = t.server.logs.filter(
      (line) =>
        line.msg === 'request' &&
        line.username === 'embed:host-user-42' &&
        line.embedTokenId === id,
    );
    expect(lines.length).toBeGreaterThan(0);
  });

  it('a host application signs its own token, for a dashboard in an iframe, with the viewer’s attributes', async () => {
    const token = await hostToken({
      resource: { dashboard: 'expenses_report' },
      params: { start_date: '2024-06-01' },
      user: { role: 'manager' },
      jti: 'host-token-1',
      sub: 'viewer@host.example',
    });
    const page = await api.get(`${P}/dashboards/expenses_report/results?x_embed_token=${token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain(
      `frame-ancestors http://127.0.0.1:${host.port}`,
    );
    expect(page.text).toContain('2024-06-01');
    const changed = await api.get(
      `${P}/dashboards/expenses_report/results?start_date=2024-01-01&x_embed_token=${token}`,
    );
    expect(changed.status).toBe(400);
    // Legacy layout too.
    expect((await api.get(`${L}/dashboard/expenses-report?x_embed_token=${token}`)).status).toBe(
      200,
    );
    // What is not a token of its own is refused with the reason, never served.
    const refusals: [string, Promise<string>][] = [
      ['expired', hostToken({ resource: { dashboard: 'expenses_report' } }, { exp: 1 })],
      [
        'expires more than 30 minutes',
        hostToken(
          { resource: { dashboard: 'expenses_report' } },
          { exp: Math.floor(Date.now() / 1000) + 7200 },
        ),
      ],
      [
        'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
        hostToken({ resource: { dashboard: 'expenses_report' } }, { key: 'x'.repeat(40) }),
      ],
      [
        'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
        // Claiming to be Drey's does not make the host's key Drey's.
        hostToken({ resource: { dashboard: 'expenses_report' }, iss: 'drey' }),
      ],
      [
        'no user field',
        hostToken({ resource: { dashboard: 'expenses_report' }, user: { department: 'x' } }),
      ],
      ['must name one dataset or one dashboard', hostToken({ resource: { report: 'x' } })],
    ];
    for (const [reason, signed] of refusals) {
      const reply = await api.get(`${P}/dashboards/expenses_report/results`, await signed);
      expect([reason, reply.status, reply.body.error]).toEqual([reason, 401, 'invalid_token']);
      expect(reply.body.message).toContain(reason);
    }

    // Attributes are a user's: the manager-only option is the viewer's with role manager, not without.
    const grouped = (role: string) =>
      hostToken({ resource: { dataset: 'expenses_grouped' }, user: { role } });
    const asManager = await api.get(
      `${P}/datasets/expenses_grouped/results?group_by=trans&x_limit=3`,
      await grouped('manager'),
    );
    expect(asManager.status).toBe(200);
    const asEmployee = await api.get(
      `${P}/datasets/expenses_grouped/results?group_by=trans&x_limit=3`,
      await grouped('employee'),
    );
    expect(asEmployee.status).toBe(400);
  });

  it('frames its HTML dashboard in a page of an allowed origin, and in no other (Chromium)', async () => {
    const token = await hostToken({ resource: { dashboard: 'expenses_report' } });
    const frame = `<!doctype html><title>host</title><iframe id="report" width="900" height="600" src="${t.url}${P}/dashboards/expenses_report/results?x_embed_token=${token}"></iframe>`;
    host.set(frame);
    other.set(frame);
    const browser: Browser = await launchBrowser();
    try {
      const shown = async (port: number) => {
        const page = await browser.newPage();
        await page.goto(`http://127.0.0.1:${port}/`);
        await sleep(1500);
        const child = page.frames().find((candidate) => candidate !== page.mainFrame());
        const text = child
          ? await child
              .locator('body')
              .innerText({ timeout: 2000 })
              .catch(() => '')
          : '';
        await page.close();
        return text;
      };
      expect(await shown(host.port)).toContain('Expenses Report');
      expect(await shown(other.port)).not.toContain('Expenses Report');
    } finally {
      await browser.close();
    }
  });

  it('answers its dashboards with one frame policy, loadable elsewhere by a token’s holder and nobody else', async () => {
    const framers = `frame-ancestors http://127.0.0.1:${host.port}`;
    const report = await hostToken({ resource: { dashboard: 'expenses_report' } });
    const image = await hostToken({ resource: { dashboard: 'expenses_dashboard' } });
    const headersOf = (reply: { headers: Headers }) => ({
      corp: reply.headers.get('cross-origin-resource-policy'),
      xfo: reply.headers.get('x-frame-options'),
      framers: reply.headers.get('content-security-policy')?.includes(framers),
    });
    const embeddable = { corp: 'cross-origin', xfo: null, framers: true };
    const html = await api.get(`${P}/dashboards/expenses_report/results?x_embed_token=${report}`);
    expect([html.status, headersOf(html)]).toEqual([200, embeddable]);
    const png = await api.get(`${P}/dashboards/expenses_dashboard/results?x_embed_token=${image}`);
    expect([png.status, png.headers.get('content-type'), headersOf(png)]).toEqual([
      200,
      'image/png',
      embeddable,
    ]);
    // A 304 says the same: a browser refreshes the headers of the copy it keeps with the 304's.
    const again = await api.get(
      `${P}/dashboards/expenses_dashboard/results?x_embed_token=${image}`,
      undefined,
      { 'If-None-Match': png.headers.get('etag') ?? '' },
    );
    expect([again.status, headersOf(again)]).toEqual([304, embeddable]);
    expect(
      headersOf(await api.get(`${P}/dashboards/expenses_report/results?x_embed_token=${report}`)),
    ).toEqual(embeddable);
    // Legacy layout alike.
    expect(
      headersOf(await api.get(`${L}/dashboard/expenses-report?x_embed_token=${report}`)),
    ).toEqual(embeddable);
    // A public page opened by nobody carries no credential either.
    expect(headersOf(await api.get(`${P}/dashboards/expenses_report/results`))).toEqual(embeddable);
    // A signed-in user's page stays Drey's own to load (a same-site image would carry their cookie).
    expect(headersOf(await api.get(`${P}/dashboards/expenses_dashboard/results`, admin))).toEqual({
      ...embeddable,
      corp: 'same-origin',
    });
    // What is not a dashboard keeps the defaults, token or not.
    const data = await hostToken({ resource: { dataset: 'expenses_by_month' } });
    expect(
      headersOf(await api.get(`${P}/datasets/expenses_by_month/results?x_embed_token=${data}`)),
    ).toEqual({ corp: 'same-origin', xfo: 'DENY', framers: false });
  });

  it('from another site, shows a PNG dashboard as an <img> and a framed one at its content’s height (Chromium)', async () => {
    // Drey by another name than the host's page: another site, not only another origin.
    const drey = t.url.replace('127.0.0.1', 'localhost');
    const report = await hostToken({ resource: { dashboard: 'expenses_report' } });
    const image = await hostToken({ resource: { dashboard: 'expenses_dashboard' } });
    host.set(`<!doctype html><title>host</title><style>body { margin: 0 }</style>
<iframe id="report" style="width: 100%; height: 150px; border: 0; display: block"
  src="${drey}${P}/dashboards/expenses_report/results?x_embed_token=${report}"></iframe>
<img id="png" alt="dashboard" src="${drey}${P}/dashboards/expenses_dashboard/results?x_embed_token=${image}">
<script>
window.addEventListener('message', function (event) {
  var frame = document.getElementById('report');
  if (event.origin !== ${JSON.stringify(drey)} || event.source !== frame.contentWindow) return;
  if (event.data && event.data.type === 'drey:resize') frame.style.height = event.data.height + 'px';
});
</script>`);
    const browser: Browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
      const refused: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') refused.push(message.text());
      });
      await page.goto(`http://127.0.0.1:${host.port}/`);
      // The image is drawn (a blocked one completes with no size).
      await page.waitForFunction("document.getElementById('png').complete", undefined, {
        timeout: 30000,
      });
      expect(
        await page.evaluate(
          "[document.getElementById('png').naturalWidth, document.getElementById('png').naturalHeight]",
        ),
      ).toEqual([1200, expect.any(Number)]);
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
      if (!frame) throw new Error('no frame');
      await frame.waitForFunction('window.__dreyReady === true');
      const sized = async () => {
        const content = await frame.evaluate<number>(
          'Math.ceil(document.documentElement.getBoundingClientRect().height)',
        );
        await page.waitForFunction(
          `document.getElementById('report').getBoundingClientRect().height === ${content}`,
          undefined,
          { timeout: 10000 },
        );
        return content;
      };
      const wide = await sized();
      expect(wide).toBeGreaterThan(600);
      // A narrower window stacks the panels: the content grows, and the frame follows it.
      await page.setViewportSize({ width: 600, height: 700 });
      await frame.waitForFunction(
        `Math.ceil(document.documentElement.getBoundingClientRect().height) > ${wide + 200}`,
      );
      expect(await sized()).toBeGreaterThan(wide + 200);
      expect(refused).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('`drey embed-token` issues the same token from the command line, audited', async () => {
    const env = {
      DATABASE_URL: t.env.DATABASE_URL,
      DATA_DIR: t.env.DATA_DIR,
      JWT_SECRET: t.env.JWT_SECRET,
      ADMIN_PASSWORD: t.env.ADMIN_PASSWORD,
      EMBED_TOKEN_MAX_MINUTES: '30',
    };
    const ran = await drey(
      [
        'embed-token',
        'dataset',
        'expenses_by_month',
        '--param',
        'max_filter=100',
        '--default',
        'start_date=2024-06-01',
        '--subject',
        'cli-viewer',
        '--minutes',
        '5',
      ],
      env,
    );
    expect([ran.code, ran.stderr]).toEqual([0, '']);
    const issued = JSON.parse(ran.stdout) as { token: string; id: string; resource: unknown };
    expect(issued.resource).toEqual({ dataset: 'expenses_by_month' });
    const rows = await api.get(`${P}/datasets/expenses_by_month/results`, issued.token);
    expect(rows.status).toBe(200);
    const direct = await api.get(
      `${P}/datasets/expenses_by_month/results?max_filter=100&start_date=2024-06-01`,
    );
    expect(rows.body.data).toEqual(direct.body.data);
    expect(
      (await api.get(`${P}/datasets/expenses_by_month/results?max_filter=50`, issued.token)).status,
    ).toBe(400);
    const audit = (await api.get(`${P}/audit?action=embed_token.create`, admin)).body.events as {
      actor: string;
      target: string;
    }[];
    expect(audit).toEqual(
      expect.arrayContaining([expect.objectContaining({ actor: 'cli', target: issued.id })]),
    );
    // What the project does not have is refused before anything is signed.
    const wrong = await drey(
      ['embed-token', 'dataset', 'expenses_by_month', '--param', 'nope=1'],
      env,
    );
    expect([wrong.code, wrong.stdout]).toEqual([1, '']);
    expect(wrong.stderr).toContain('The dataset "expenses_by_month" has no parameter "nope"');
    expect((await drey(['embed-token', 'report', 'x'], env)).code).toBe(2);
  });

  it('a revoked token opens nothing, on every process, before it expires', async () => {
    const replica: ServerProcess = await t.another();
    const { token, id } = await issue({ dashboard: 'expenses_report' });
    const host1 = await hostToken({ resource: { dashboard: 'expenses_report' }, jti: 'host-2' });
    for (const url of [t.url, replica.url]) {
      const reader = new Api(url);
      expect((await reader.get(`${P}/dashboards/expenses_report/results`, token)).status).toBe(200);
      expect((await reader.get(`${P}/dashboards/expenses_report/results`, host1)).status).toBe(200);
    }
    for (const revoked of [id, 'host-2']) {
      const reply = await api.request('DELETE', `${P}/embed-tokens/${revoked}`, { token: admin });
      expect(reply.status).toBe(200);
    }
    for (const url of [t.url, replica.url]) {
      const reader = new Api(url);
      for (const revoked of [token, host1]) {
        const reply = await reader.get(`${P}/dashboards/expenses_report/results`, revoked);
        expect([reply.status, reply.body.message]).toEqual([
          401,
          'The embedding token was revoked',
        ]);
      }
    }
    // Only administrators issue and revoke.
    const user = await api.userToken(admin, 'embed-viewer');
    expect(
      (await api.request('POST', `${P}/embed-tokens`, { token: user, json: { dashboard: 'x' } }))
        .status,
    ).toBe(403);
    const bad = await api.request('POST', `${P}/embed-tokens`, {
      token: admin,
      json: { dataset: 'expense_transactions', params: { nope: 1 } },
    });
    expect([bad.status, bad.body.message]).toEqual([
      400,
      'The dataset "expense_transactions" has no parameter "nope"',
    ]);
    // The body's shape is its DTO's: a field it does not know, or null where a name goes, signs nothing.
    for (const [json, message] of [
      [{ dataset: 'expense_transactions', minutes: 5 }, 'property minutes should not exist'],
      [{ dataset: null }, 'dataset must be a string'],
      [
        { dataset: 'expense_transactions', expiry_minutes: 1.5 },
        'expiry_minutes must be an integer number',
      ],
    ] as const) {
      const refused = await api.request('POST', `${P}/embed-tokens`, { token: admin, json });
      expect([refused.status, refused.body.error, refused.body.message]).toEqual([
        400,
        'invalid_request',
        message,
      ]);
    }
    await replica.stop();
  });
});

describe('embedding: a host application that signs with a private key (EMBED_PUBLIC_KEY_FILE)', () => {
  it('accepts its ES256 tokens and refuses HS256 ones, which no secret here checks', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const dir = tempDir('drey-embed-key-');
    const file = join(dir.path, 'host.pem');
    writeFileSync(file, publicKey.export({ type: 'spki', format: 'pem' }));
    const t = await startServer({ EMBED_PUBLIC_KEY_FILE: file });
    try {
      const now = Math.floor(Date.now() / 1000);
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const head = `${part({ alg: 'ES256', typ: 'JWT' })}.${part({
        aud: 'drey-embed',
        exp: now + 120,
        project: 'expenses/v1',
        resource: { dataset: 'expenses_by_month' },
        params: { max_filter: 50 },
      })}`;
      const signature = sign('sha256', Buffer.from(head), {
        key: privateKey,
        dsaEncoding: 'ieee-p1363',
      }).toString('base64url');
      const api = new Api(t.url);
      const reply = await api.get(
        `${P}/datasets/expenses_by_month/results`,
        `${head}.${signature}`,
      );
      expect(reply.status).toBe(200);
      expect(reply.body.data.length).toBeGreaterThan(0);
      const hs = signJwt(
        { aud: 'drey-embed', exp: now + 120, resource: { dataset: 'x' } },
        'k'.repeat(40),
      );
      const refused = await api.get(`${P}/datasets/expenses_by_month/results`, hs);
      expect([refused.status, refused.body.error]).toEqual([401, 'invalid_token']);
    } finally {
      await t.close();
      dir.remove();
    }
  });
});
