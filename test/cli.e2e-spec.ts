import { spawn } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, P } from './support/api';
import {
  BENCH_PROJECT,
  EXAMPLE_PROJECT,
  REPO_ROOT,
  TestServer,
  baseEnv,
  startServer,
} from './support/server';
import { createTestDatabase, tempDir } from './support/services';
import { CLI, Dev, Ran, drey } from './support/drey-cli';

describe('the drey command line, as a process', () => {
  it('stops quietly when its reader closes the pipe early (drey run ... | head)', async () => {
    const dir = tempDir();
    try {
      // A public dataset of 5,000 rows, every one of them exported: the reader leaves after 100 bytes.
      const env = { DATA_DIR: dir.path, PROJECT_DIR: BENCH_PROJECT, ORDERS_ROWS: '5000' };
      expect((await drey(['build'], env)).code).toBe(0);
      const ran = await drey(['run', 'orders_detail', '--format', 'csv'], env, {
        closeAfter: 100,
      });
      expect(ran.stderr).toBe('');
      expect(ran.code).toBe(0);
      expect(ran.stdout.length).toBeGreaterThanOrEqual(100);
    } finally {
      dir.remove();
    }
  });

  it('answers --version, help per command and usage errors with their exit codes', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(await drey(['--version'], {})).toEqual({
      code: 0,
      stdout: `drey ${version}\n`,
      stderr: '',
    });
    const users = await drey(['users', '--help'], {});
    expect(users).toMatchObject({ code: 0, stderr: '' });
    expect(users.stdout).toMatch(/^Usage: npm run drey -- users <command>/);
    const reset = await drey(['help', 'users', 'reset-password'], {});
    expect(reset.stdout).toMatch(/^Usage: npm run drey -- users reset-password <name>/);
    const wrong = await drey(['run', 'expenses_by_month', '--formt', 'csv'], {});
    expect(wrong).toMatchObject({ code: 2, stdout: '' });
    expect(wrong.stderr).toMatch(
      /^Unknown option '--formt'\n\nUsage: npm run drey -- run <dataset> \[options\]\n/,
    );
  });

  it('validate prints the YAML and the SQL problems of a project in one run', async () => {
    const dir = tempDir();
    try {
      cpSync(EXAMPLE_PROJECT, dir.path, { recursive: true });
      const edit = (file: string, from: string, to: string) =>
        writeFileSync(
          join(dir.path, file),
          readFileSync(join(dir.path, file), 'utf8').replace(from, to),
        );
      edit('project.yml', 'major_version: 1', 'major_version: one');
      edit('project.yml', 'scope: private', 'scope: secret');
      edit('models/expenses_by_month.sql', 'sum(amount)', 'sum(amout)');
      const ran = await drey(['validate', '--project', dir.path], { DATA_DIR: dir.path });
      expect(ran).toMatchObject({ code: 1, stdout: '' });
      expect(ran.stderr.split('\n').filter((line) => /^ {2}\S/.test(line))).toEqual([
        '  in its files (2):',
        '  in its SQL (1):',
      ]);
      expect(ran.stderr).toContain('    project.yml at major_version: must be a whole number');
      expect(ran.stderr).toContain('    project.yml at datasets[2].scope: must be one of');
      expect(ran.stderr).toContain(
        '    models/expenses_by_month.sql at line 1, column 19: Binder Error: Referenced column "amout"',
      );
    } finally {
      dir.remove();
    }
  });

  describe('run --as, with the rights and fields of users of a running service', () => {
    let t: TestServer;
    let api: Api;
    let env: Record<string, string>;
    const lines = (text: string) => text.replace(/\r\n/g, '\n').trimEnd().split('\n');

    beforeAll(async () => {
      t = await startServer();
      api = new Api(t.url);
      env = { DATABASE_URL: t.env.DATABASE_URL, DATA_DIR: t.env.DATA_DIR };
    });
    afterAll(async () => {
      await t.close();
    });

    it('exports every row of a private dataset as an administrator, in csv and json, or --limit', async () => {
      const csv = await drey(
        ['run', 'expense_transactions', '--as', 'admin', '--format', 'csv'],
        env,
      );
      expect(csv).toMatchObject({ code: 0, stderr: '' });
      expect(lines(csv.stdout)).toHaveLength(1001);
      const json = await drey(
        ['run', 'expense_transactions', '--as', 'admin', '--format=json'],
        env,
      );
      const rows = JSON.parse(json.stdout) as Record<string, unknown>[];
      expect(rows).toHaveLength(1000);
      const exported = await fetch(`${t.url}${P}/datasets/expense_transactions/results`, {
        headers: { accept: 'text/csv', authorization: `Bearer ${await api.adminToken()}` },
      });
      expect(lines(csv.stdout)).toHaveLength(lines(await exported.text()).length);
      const limited = await drey(
        ['run', 'expense_transactions', '--as', 'admin', '--format', 'csv', '--limit', '150'],
        env,
      );
      expect(lines(limited.stdout)).toEqual(lines(csv.stdout).slice(0, 151));
    });

    it("takes the user's fields: a manager's default grouping lists transactions, an employee's days", async () => {
      const admin = await api.adminToken();
      const manager = await api.userToken(admin, 'mia', { role: 'manager' });
      const employee = await api.userToken(admin, 'eve', { role: 'employee' });
      const http = async (token: string) =>
        lines(
          await (
            await fetch(`${t.url}${P}/datasets/expenses_grouped/results`, {
              headers: { accept: 'text/csv', authorization: `Bearer ${token}` },
            })
          ).text(),
        );
      const cli = async (user: string) => {
        const ran = await drey(['run', 'expenses_grouped', '--as', user, '--format', 'csv'], env);
        expect(ran).toMatchObject({ code: 0, stderr: '' });
        return lines(ran.stdout);
      };
      const mia = await cli('mia');
      const eve = await cli('eve');
      expect(mia[0]).toBe('id,date,category,subcategory,description,total_amount');
      expect(mia).toHaveLength(1001);
      expect(eve[0]).toBe('date,total_amount');
      expect(eve.length).toBeLessThan(mia.length);
      expect(mia).toHaveLength((await http(manager)).length);
      expect(eve).toHaveLength((await http(employee)).length);
      // An option the user's group may not choose is refused for them, as over HTTP.
      const refused = await drey(
        ['run', 'expenses_grouped', '--as', 'eve', '--param', 'group_by=trans'],
        env,
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('group_by');
      // In the same words: the parameter catalog of the results reader refused it, as it does over HTTP.
      const overHttp = await api.get(
        `${P}/datasets/expenses_grouped/results?group_by=trans`,
        employee,
      );
      expect(overHttp.status).toBe(400);
      expect(refused.stderr).toBe(`${(overHttp.body as { message: string }).message}\n`);
    });

    it('refuses an unknown user, and a dataset the user may not open', async () => {
      const unknown = await drey(['run', 'expenses_by_month', '--as', 'nobody'], env);
      expect(unknown).toEqual({
        code: 1,
        stdout: '',
        stderr: `there is no user "nobody" in the service's database (DATABASE_URL)\n`,
      });
      const empty = tempDir();
      try {
        const none = await drey(['run', 'expenses_by_month', '--as', 'admin'], {
          DATA_DIR: empty.path,
        });
        expect(none).toMatchObject({ code: 1, stdout: '' });
        expect(none.stderr).toMatch(/^there is no service database under \S+ yet/);
      } finally {
        empty.remove();
      }
      const admin = await api.adminToken();
      await api.userToken(admin, 'olga', { role: 'employee' });
      const notAdmin = await drey(['run', 'expense_transactions', '--as', 'olga'], env);
      expect(notAdmin).toMatchObject({ code: 1, stdout: '' });
      expect(notAdmin.stderr).toBe(
        'the dataset "expense_transactions" is private: "olga" (not an administrator) may not run it (run it --as NAME, an administrator)\n',
      );
    });

    // Last: its reset-password changes the administrator's password.
    it("runs the README's command-line examples as written", async () => {
      const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
      const section = readme.slice(readme.indexOf('## The command line'));
      const block = /```sh\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ')))?.[1];
      const commands = (block ?? '')
        .split('\n')
        .filter((line) => line.startsWith('npm run drey -- '));
      expect(commands.length).toBeGreaterThanOrEqual(4);
      const dir = tempDir();
      try {
        for (const command of commands) {
          const shell = command.replace('npm run drey --', `node ${JSON.stringify(CLI)}`);
          const ran = await new Promise<Ran>((resolve, reject) => {
            const child = spawn('bash', ['--noprofile', '--norc', '-c', shell], {
              cwd: dir.path,
              env: {
                PATH: process.env.PATH ?? '',
                ENV_FILE: '',
                PROJECT_DIR: EXAMPLE_PROJECT,
                ...env,
              },
            });
            let stdout = '';
            let stderr = '';
            child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
            child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
            child.on('error', reject);
            child.on('close', (code) => resolve({ code, stdout, stderr }));
          });
          expect({ command, ...ran }).toMatchObject({ command, code: 0, stderr: '' });
        }
        const exported = readFileSync(join(dir.path, 'transactions.csv'), 'utf8');
        expect(lines(exported)).toHaveLength(1001);
      } finally {
        dir.remove();
      }
    });
  });

  describe('users reset-password, on the database of a running service', () => {
    let t: TestServer;
    let api: Api;
    let env: Record<string, string>;

    beforeAll(async () => {
      t = await startServer();
      api = new Api(t.url);
      env = { DATABASE_URL: t.env.DATABASE_URL, DATA_DIR: t.env.DATA_DIR };
    });
    afterAll(async () => {
      await t.close();
    });

    it('sets a password read from standard input; the old one stops working', async () => {
      const admin = await api.adminToken();
      await api.userToken(admin, 'dana');
      const ran = await drey(['users', 'reset-password', 'dana', '--password-stdin'], env, {
        input: 'a-new-password-for-dana\n',
      });
      expect(ran).toMatchObject({ code: 0, stderr: '' });
      expect(ran.stdout).toBe('The password of "dana" is set.\n');
      expect(await api.login('dana', 'a-new-password-for-dana')).toEqual(expect.any(String));
      const old = await api.request('POST', `${P}/login`, {
        form: { username: 'dana', password: 'dana-password' },
      });
      expect(old.status).toBe(401);
    });

    it('generates and prints one when none is given, and refuses unknown users and short passwords', async () => {
      const ran = await drey(['users', 'reset-password', 'admin'], env);
      expect(ran.code).toBe(0);
      const password = /shown once\):\n\s+(\S+)\n$/.exec(ran.stdout)?.[1] as string;
      expect(await api.login('admin', password)).toEqual(expect.any(String));

      const unknown = await drey(['users', 'reset-password', 'nobody', '--password-stdin'], env, {
        input: 'long-enough-password',
      });
      expect(unknown).toMatchObject({ code: 1, stderr: 'there is no user "nobody"\n' });
      const short = await drey(['users', 'reset-password', 'admin', '--password-stdin'], env, {
        input: 'short',
      });
      expect(short).toMatchObject({
        code: 1,
        stderr: 'The password must be at least 8 characters long (PASSWORD_MIN_LENGTH)\n',
      });
    });
  });

  it('reads .env for settings the environment does not set; the environment wins', async () => {
    const dir = tempDir();
    const envFile = join(dir.path, 'drey.env');
    writeFileSync(envFile, 'CORS_ORIGINS=http://client.test\nLOG_LEVEL=error\n');
    const t = await startServer({ ENV_FILE: envFile });
    try {
      const reply = await fetch(`${t.url}/health/live`, {
        headers: { Origin: 'http://client.test' },
      });
      expect(reply.headers.get('access-control-allow-origin')).toBe('http://client.test');
      // LOG_LEVEL=info from the environment, not error from the file: the listening line is there.
      expect(t.server.logs.find((line) => line.msg === 'listening')).toMatchObject({ envFile });
    } finally {
      await t.close();
      dir.remove();
    }
  });

  it('drey dev serves the project, rebuilds it on a change, and prints problems instead of building them', async () => {
    const dir = tempDir();
    const project = join(dir.path, 'project');
    cpSync(EXAMPLE_PROJECT, project, { recursive: true });
    const database = await createTestDatabase();
    const env = baseEnv(join(dir.path, 'data'), database.url, { PROJECT_DIR: project });
    const dev = new Dev(
      spawn(process.execPath, [CLI, 'dev'], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', ...env },
      }),
      30000,
    );
    const builds = () => dev.count('build succeeded');
    try {
      await dev.waitFor(() => builds() === 1 && dev.logs.some((line) => line.msg === 'listening'));
      const url = String(dev.logs.find((line) => line.msg === 'listening')?.url);
      const api = new Api(url);
      const fields = async () =>
        (
          (await api.get(`${P}/datasets/expenses_by_month/results`)).body.schema.fields as {
            name: string;
          }[]
        ).map((field) => field.name);
      expect(await fields()).toEqual(['month', 'total_amount']);

      const sql = join(project, 'models', 'expenses_by_month.sql');
      const original = readFileSync(sql, 'utf8');
      writeFileSync(
        sql,
        original.replace(
          'sum(amount) AS total_amount',
          'sum(amount) AS total_amount, count(*) AS n',
        ),
      );
      await dev.waitFor(() => builds() === 2);
      expect(await fields()).toEqual(['month', 'total_amount', 'n']);

      writeFileSync(sql, original.replace('sum(amount)', 'sum(amout)'));
      await dev.waitFor(() => dev.stderr.includes('not rebuilt'));
      expect(dev.stderr).toContain('models/expenses_by_month.sql at line 1, column 19');
      expect(builds()).toBe(2);
      expect(await fields()).toEqual(['month', 'total_amount', 'n']);
    } finally {
      await dev.stop();
      await database.drop();
      dir.remove();
    }
  }, 90000);
});
