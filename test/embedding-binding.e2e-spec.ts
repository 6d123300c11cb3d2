import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, P, signJwt } from './support/api';
import { ADMIN_PASSWORD, REPO_ROOT, TestServer, startServer } from './support/server';
import { tempDir } from './support/services';

const EMBED_SECRET = 'both-deployments-were-given-this-host-secret';
const SHARED_JWT_SECRET = 'both-deployments-were-given-this-jwt-secret-too';
const P2 = '/api/service-v0/project/expenses2/v1';

/** A login token on the second deployment, whose project is expenses2. */
async function loginB(api: Api, username: string, password: string): Promise<string> {
  const reply = await api.request('POST', `${P2}/login`, { form: { username, password } });
  expect(reply.status).toBe(200);
  return reply.body.access_token as string;
}

function hostToken(claims: Record<string, unknown>): string {
  const now = Math.floor(Date.now() / 1000);
  return signJwt({ aud: 'drey-embed', iat: now, exp: now + 300, ...claims }, EMBED_SECRET);
}

/**
 * Embedding tokens as an attacker uses them (issue 37): a token is bound to the deployment's project and
 * major version, to an item that exists, and to its issuer's rights at each use.
 */
describe('embedding tokens: bound to their project, their item and their issuer', () => {
  const dir = tempDir('drey-embed-bind-');
  let a: TestServer;
  let b: TestServer;
  let apiA: Api;
  let apiB: Api;
  let adminA: string;
  let adminB: string;

  beforeAll(async () => {
    // A second deployment serving a copy of the example under another name, with the same keys: what a
    // staging and a production deployment that share secrets look like.
    const copy = join(dir.path, 'expenses2');
    cpSync(join(REPO_ROOT, 'examples', 'expenses'), copy, { recursive: true });
    const manifest = join(copy, 'project.yml');
    writeFileSync(
      manifest,
      readFileSync(manifest, 'utf8').replace(/^name:\s*expenses\s*$/m, 'name: expenses2'),
    );
    const shared = { EMBED_SECRET, JWT_SECRET: SHARED_JWT_SECRET };
    [a, b] = await Promise.all([
      startServer(shared),
      startServer({ ...shared, PROJECT_DIR: copy }),
    ]);
    apiA = new Api(a.url);
    apiB = new Api(b.url);
    [adminA, adminB] = await Promise.all([
      apiA.adminToken(),
      loginB(apiB, 'admin', ADMIN_PASSWORD),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    dir.remove();
  });

  it("refuses another deployment's tokens with 401, Drey-signed or host-signed", async () => {
    // A's token for its public dataset; B has a dataset of the same name, private.
    const issued = await apiA.request('POST', `${P}/embed-tokens`, {
      token: adminA,
      json: { dataset: 'expense_transactions' },
    });
    expect(issued.status).toBe(201);
    const fromA = issued.body.token as string;
    expect((await apiA.get(`${P}/datasets/expense_transactions/results`, fromA)).status).toBe(200);
    const host = hostToken({
      project: 'expenses/v1',
      resource: { dataset: 'expense_transactions' },
    });
    for (const token of [fromA, host]) {
      const reply = await apiB.get(`${P2}/datasets/expense_transactions/results`, token);
      expect([reply.status, reply.body.error]).toEqual([401, 'invalid_token']);
      expect(reply.body.message).toBe(
        'The embedding token is for the project "expenses/v1", not "expenses2/v1"',
      );
      // The iframe's way in too.
      const linked = await apiB.get(
        `${P2}/datasets/expense_transactions/results?x_embed_token=${token}`,
      );
      expect(linked.status).toBe(401);
    }
    // Another major version of the same project, or none named at all, is refused as well.
    for (const [project, message] of [
      ['expenses/v2', 'is for the project "expenses/v2", not "expenses/v1"'],
      [undefined, 'must name the project it is for'],
      ['expenses', 'must name the project it is for'],
    ] as const) {
      const token = hostToken({ project, resource: { dataset: 'expenses_by_month' } });
      const reply = await apiA.get(`${P}/datasets/expenses_by_month/results`, token);
      expect([project, reply.status]).toEqual([project, 401]);
      expect(reply.body.message).toContain(message);
    }
  });

  it('refuses a token for an item that does not exist: 400 at issue, 401 at use', async () => {
    for (const body of [{ dataset: 'no_such_dataset' }, { dashboard: 'no_such_dashboard' }]) {
      const reply = await apiA.request('POST', `${P}/embed-tokens`, { token: adminA, json: body });
      expect([reply.status, reply.body.error]).toEqual([400, 'invalid_request']);
      expect(reply.body.message).toMatch(/^The project has no (dataset|dashboard) named "no_such_/);
    }
    const ghost = hostToken({ project: 'expenses/v1', resource: { dataset: 'no_such_dataset' } });
    // Whatever item it is sent to, it opens nothing: a refused token, not a 404.
    for (const path of [
      `${P}/datasets/no_such_dataset/results`,
      `${P}/datasets/expenses_by_month/results`,
      `${P}/data-catalog`,
    ]) {
      const reply = await apiA.get(path, ghost);
      expect([path, reply.status, reply.body.error]).toEqual([path, 401, 'invalid_token']);
      expect(reply.body.message).toBe(
        'The token\'s "resource" names no dataset of this project: "no_such_dataset"',
      );
    }
  });

  it("refuses locked values the viewer's fields make invalid, before signing", async () => {
    // group_by "trans" is a manager's option (user_fields.role): an employee's token would be a 400 at
    // every use, so it is not issued.
    const refused = await apiA.request('POST', `${P}/embed-tokens`, {
      token: adminA,
      json: {
        dataset: 'expenses_grouped',
        params: { group_by: 'trans' },
        user: { role: 'employee' },
      },
    });
    expect([refused.status, refused.body.error]).toEqual([400, 'invalid_request']);
    expect(refused.body.message).toMatch(/^Every use of this token would be refused: /);
    const audit = (await apiA.get(`${P}/audit?action=embed_token.create`, adminA)).body.events as {
      details: { item?: string; locked?: unknown };
    }[];
    expect(
      audit.some((event) => JSON.stringify(event.details.locked) === '{"group_by":"trans"}'),
    ).toBe(false);
    const allowed = await apiA.request('POST', `${P}/embed-tokens`, {
      token: adminA,
      json: {
        dataset: 'expenses_grouped',
        params: { group_by: 'trans' },
        user: { role: 'manager' },
      },
    });
    expect(allowed.status).toBe(201);
    const rows = await apiA.get(
      `${P}/datasets/expenses_grouped/results?x_limit=2`,
      allowed.body.token,
    );
    expect(rows.status).toBe(200);
  });

  it("bounds a token by its issuer's rights at each use: demoted or deleted, its tokens open nothing", async () => {
    const issueAs = async (token: string) => {
      const reply = await apiB.request('POST', `${P2}/embed-tokens`, {
        token,
        json: { dataset: 'expense_transactions', expiry_minutes: 30 },
      });
      expect(reply.status).toBe(201);
      return reply.body.token as string;
    };
    const path = `${P2}/datasets/expense_transactions/results?x_limit=1`;
    const promoted = async (name: string) => {
      const created = await apiB.request('POST', `${P2}/users`, {
        token: adminB,
        json: { username: name, password: `${name}-password-1` },
      });
      expect(created.status).toBe(200);
      const token = await loginB(apiB, name, `${name}-password-1`);
      const made = await apiB.request('PUT', `${P2}/users/${name}`, {
        token: adminB,
        json: { is_admin: true },
      });
      expect(made.status).toBe(200);
      // The user's token carries the new rights from the next request.
      return token;
    };

    const demotedAdmin = await promoted('second-admin');
    const demotedsToken = await issueAs(demotedAdmin);
    expect((await apiB.get(path, demotedsToken)).status).toBe(200);
    const demote = await apiB.request('PUT', `${P2}/users/second-admin`, {
      token: adminB,
      json: { is_admin: false },
    });
    expect(demote.status).toBe(200);
    const afterDemotion = await apiB.get(path, demotedsToken);
    expect([afterDemotion.status, afterDemotion.body.message]).toEqual([
      401,
      'The administrator who issued this embedding token no longer exists or is no longer an administrator',
    ]);

    const deletedAdmin = await promoted('third-admin');
    const deletedsToken = await issueAs(deletedAdmin);
    expect((await apiB.get(path, deletedsToken)).status).toBe(200);
    expect(
      (await apiB.request('DELETE', `${P2}/users/third-admin`, { token: adminB })).status,
    ).toBe(200);
    expect((await apiB.get(path, deletedsToken)).status).toBe(401);

    // A token whose `by` was taken out or changed no longer verifies: `by` is signed like the rest.
    const [head, body, signature] = deletedsToken.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const tampered = `${head}.${Buffer.from(JSON.stringify({ ...claims, by: 'cli' })).toString('base64url')}.${signature}`;
    expect((await apiB.get(path, tampered)).status).toBe(401);
  });
});
