import { Api, P } from './support/api';
import { drey } from './support/drey-cli';
import { TestServer, startServer } from './support/server';

/** The command line keeps the input rules every door applies (src/core/input-rules.ts). */
describe('drey, given what the HTTP door refuses', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
    env = { DATABASE_URL: t.env.DATABASE_URL, DATA_DIR: t.env.DATA_DIR };
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a password with a NUL from standard input, and adds no user', async () => {
    const ran = await drey(['users', 'add', 'nul', '--password-stdin'], env, {
      input: 'long-enough\u0000password\n',
    });
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe('');
    expect(ran.stderr).toMatch(
      /^the password holds a NUL character or an unpaired UTF-16 surrogate, which no input may contain\n$/,
    );
    const users = await api.get(`${P}/users`, admin);
    expect(users.status).toBe(200);
    expect(JSON.stringify(users.body)).not.toContain('"nul"');
  });

  it('refuses a selection over the size any input may have, naming it, before it runs anything', async () => {
    const ran = await drey(
      ['run', 'expenses_by_month', '--param', `start_date=${'2'.repeat(100_001)}`],
      env,
    );
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe('');
    expect(ran.stderr.split('\n')[0]).toBe('--param.start_date is longer than 100000 characters');
  });
});
