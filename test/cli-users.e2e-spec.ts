import { Api, P } from './support/api';
import { drey } from './support/drey-cli';
import { TestServer, startServer } from './support/server';

/**
 * `drey users add|list|unlock|reset-password` on the database of a running service (real Postgres), with
 * a password minimum of 12 for both: the CLI and the API apply the one policy.
 */
describe('drey users, beside a running service', () => {
  const POLICY = {
    PASSWORD_MIN_LENGTH: '12',
    LOGIN_MAX_FAILURES: '2',
    LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
    LOGIN_WINDOW_SECONDS: '600',
  };
  let t: TestServer;
  let api: Api;
  let admin: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await startServer(POLICY);
    api = new Api(t.url);
    admin = await api.adminToken();
    env = { DATABASE_URL: t.env.DATABASE_URL, DATA_DIR: t.env.DATA_DIR, ...POLICY };
  });
  afterAll(async () => {
    await t.close();
  });

  const failLogin = (username: string) =>
    api.request('POST', `${P}/login`, { form: { username, password: 'not-the-password' } });

  it('adds a user with fields and a password from standard input; the API sees them', async () => {
    const ran = await drey(
      ['users', 'add', 'mia', '--user-field', 'role=manager', '--password-stdin'],
      env,
      { input: 'mia-twelve-chars\n' },
    );
    expect(ran).toEqual({ code: 0, stdout: 'Added user "mia".\n', stderr: '' });
    const token = await api.login('mia', 'mia-twelve-chars');
    expect((await api.get(`${P}/me`, token)).body).toEqual({
      username: 'mia',
      is_admin: false,
      role: 'manager',
    });
  });

  it('adds an administrator with a generated password, printed once, that the policy accepts', async () => {
    const ran = await drey(['users', 'add', 'leo', '--admin'], env);
    expect(ran.code).toBe(0);
    expect(ran.stderr).toBe('');
    const [first, second, password] = /^(.*)\n(.*)\n\s+(\S+)\n$/.exec(ran.stdout)?.slice(1) ?? [];
    expect(first).toBe('Added user "leo", an administrator.');
    expect(second).toBe('The password of "leo" is now (shown once):');
    expect(password.length).toBeGreaterThanOrEqual(16);
    const token = await api.login('leo', password);
    expect((await api.get(`${P}/me`, token)).body).toEqual({
      username: 'leo',
      is_admin: true,
      role: 'employee',
    });
  });

  it.each([
    [['mia'], 'User "mia" already exists', 'mia-twelve-chars'],
    [
      ['ann'],
      'The password must be at least 12 characters long (PASSWORD_MIN_LENGTH)',
      'eleven-char',
    ],
    [
      ['ann', '--user-field', 'colour=red'],
      '"colour" is not a user field of the project (it has: role)',
      'ann-long-password',
    ],
    [
      ['ann', '--user-field', 'role=boss'],
      'Field "role" must be one of manager, employee',
      'ann-long-password',
    ],
    [['a b'], 'Field "username" must be 1-64 letters', 'ann-long-password'],
    [['ann'], 'standard input holds more than 4096 bytes: not a password', 'x'.repeat(5000)],
  ])('refuses users add %j: "%s" (exit 1)', async (words, why, input) => {
    const ran = await drey(['users', 'add', ...words, '--password-stdin'], env, { input });
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe('');
    expect(ran.stderr).toMatch(new RegExp(`^${why.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(ran.stderr.split('\n')).toHaveLength(2);
  });

  it('applies the configured minimum to the API and to reset-password too', async () => {
    const added = await api.request('POST', `${P}/users`, {
      token: admin,
      json: { username: 'ann', password: 'eleven-char' },
    });
    expect(added.status).toBe(400);
    expect(added.body).toMatchObject({
      error: 'invalid_password',
      message: 'Field "password" must be at least 12 characters long (PASSWORD_MIN_LENGTH)',
    });
    const reset = await drey(['users', 'reset-password', 'mia', '--password-stdin'], env, {
      input: 'eleven-char',
    });
    expect(reset).toEqual({
      code: 1,
      stdout: '',
      stderr: 'The password must be at least 12 characters long (PASSWORD_MIN_LENGTH)\n',
    });
    expect(await api.login('mia', 'mia-twelve-chars')).toEqual(expect.any(String));
  });

  it('lists the users with their fields and whether failed logins locked them', async () => {
    for (let i = 0; i < 2; i += 1) expect((await failLogin('mia')).status).toBe(401);
    expect((await failLogin('mia')).status).toBe(429);

    const json = await drey(['users', 'list', '--format', 'json'], env);
    expect(json.code).toBe(0);
    const users = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(users.map((user) => user.username)).toEqual(['admin', 'mia', 'leo']);
    expect(users[0]).toEqual({
      username: 'admin',
      is_admin: true,
      locked: false,
      locked_for_seconds: null,
      role: 'employee',
    });
    expect(users[1]).toMatchObject({
      username: 'mia',
      is_admin: false,
      locked: true,
      role: 'manager',
    });
    expect(users[1].locked_for_seconds).toBeGreaterThan(500);
    expect(users[1].locked_for_seconds).toBeLessThanOrEqual(600);

    const table = await drey(['users', 'list'], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0].split(/ +/)).toEqual([
      'username',
      'is_admin',
      'locked',
      'locked_for_seconds',
      'role',
    ]);
    expect(lines[1]).toMatch(/^-+( +-+)+$/);
    expect(lines[3]).toMatch(/^mia +false +true +\d+ +manager$/);
    expect(lines[4]).toMatch(/^leo +true +false +NULL +employee$/);
  });

  it('lifts a lockout: the user logs in again at once', async () => {
    expect((await failLogin('mia')).status).toBe(429);
    const ran = await drey(['users', 'unlock', 'mia'], env);
    expect(ran).toEqual({
      code: 0,
      stdout: '"mia" may log in again (2 failed logins forgotten).\n',
      stderr: '',
    });
    expect(await api.login('mia', 'mia-twelve-chars')).toEqual(expect.any(String));
    expect(await drey(['users', 'unlock', 'mia'], env)).toMatchObject({
      code: 0,
      stdout: '"mia" had no failed logins: nothing to lift.\n',
    });
    expect(await drey(['users', 'unlock', 'ghost'], env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'there is no user "ghost"\n',
    });
  });

  it('records what it did in the audit log, with actor cli', async () => {
    const { body } = await api.get(`${P}/audit?actor=cli&limit=50`, admin);
    const events = (body.events as Record<string, unknown>[]).map(
      ({ action, target, outcome, details }) => ({ action, target, outcome, details }),
    );
    expect(events).toEqual(
      expect.arrayContaining([
        {
          action: 'user.create',
          target: 'mia',
          outcome: 'success',
          details: { is_admin: false, fields: { role: 'manager' }, via: 'drey users add' },
        },
        {
          action: 'user.create',
          target: 'leo',
          outcome: 'success',
          details: { is_admin: true, fields: { role: 'employee' }, via: 'drey users add' },
        },
        {
          action: 'user.create',
          target: 'mia',
          outcome: 'failure',
          details: { error: 'invalid_user' },
        },
        {
          action: 'user.unlock',
          target: 'mia',
          outcome: 'success',
          details: { failures_forgotten: 2, via: 'drey users unlock' },
        },
        {
          action: 'user.unlock',
          target: 'ghost',
          outcome: 'failure',
          details: { error: 'user_not_found' },
        },
        {
          action: 'user.list',
          target: null,
          outcome: 'success',
          details: { users: 3, via: 'drey users list' },
        },
      ]),
    );
  });

  it('answers a wrong command line with exit code 2 and the usage', async () => {
    const ran = await drey(['users', 'add'], env);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/^users add needs a user name\n\nUsage: npm run drey/);
    const help = await drey(['users', 'unlock', '--help'], env);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: npm run drey -- users unlock <name>/);
  });
});
