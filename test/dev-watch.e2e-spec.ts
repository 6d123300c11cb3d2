import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Api, P } from './support/api';
import { CLI, Dev } from './support/drey-cli';
import { EXAMPLE_PROJECT, REPO_ROOT, baseEnv } from './support/server';
import { createTestDatabase, tempDir } from './support/services';

/**
 * Each way an editor or a tool saves a file, on a model that was broken and is fixed by that save: the fix
 * must be checked, built and served (seen over HTTP), and the same file must stay watched afterwards (the
 * next step edits it again). Node's recursive fs.watch lost a file after its first save by rename.
 */
describe('drey dev sees every way a file is saved', () => {
  const dir = tempDir();
  const project = join(dir.path, 'project');
  const sql = join(project, 'models', 'expenses_by_month.sql');
  let original: string;
  let dev: Dev;
  let api: Api;
  let drop: (() => Promise<void>) | undefined;

  /** The model with one more column, `name`, so that the served build shows which save was taken. */
  const withColumn = (name: string) =>
    original.replace('sum(amount) AS total_amount', `sum(amount) AS total_amount, 1 AS ${name}`);
  const broken = () => original.replace('sum(amount)', 'sum(amout)');
  const buildCount = () => dev.count('build succeeded');
  /** The checks dev has refused so far: each says the project was `not rebuilt`. */
  const refusalCount = () => dev.stderr.split('not rebuilt').length - 1;

  const fields = async () =>
    (
      (await api.get(`${P}/datasets/expenses_by_month/results`)).body.schema.fields as {
        name: string;
      }[]
    ).map((field) => field.name);

  /** Breaks the model by a plain write and waits until dev has refused it; the server keeps its build. */
  async function breakModel(): Promise<void> {
    const refusals = refusalCount();
    writeFileSync(sql, broken());
    await dev.waitFor(() => refusalCount() > refusals);
  }

  /** Runs `save`, then waits for the rebuild it causes and returns the fields served after it. */
  async function savedBy(save: () => void): Promise<string[]> {
    const builds = buildCount();
    save();
    await dev.waitFor(() => buildCount() > builds);
    return fields();
  }

  beforeAll(async () => {
    cpSync(EXAMPLE_PROJECT, project, { recursive: true });
    original = readFileSync(sql, 'utf8');
    const database = await createTestDatabase();
    drop = () => database.drop();
    const env = baseEnv(join(dir.path, 'data'), database.url, { PROJECT_DIR: project });
    dev = new Dev(
      spawn(process.execPath, [CLI, 'dev'], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', ...env },
      }),
      45000,
    );
    await dev.waitFor(
      () =>
        buildCount() === 1 &&
        dev.logs.some((line) => line.msg === 'listening') &&
        dev.stderr.includes('drey dev: watching'),
      60000,
    );
    api = new Api(String(dev.logs.find((line) => line.msg === 'listening')?.url));
    expect(await fields()).toEqual(['month', 'total_amount']);
  }, 90000);

  afterAll(async () => {
    // Also after a failed start: whatever was started is stopped, whatever was made is removed.
    await (dev as Dev | undefined)?.stop();
    await drop?.();
    dir.remove();
  }, 30000);

  it('a save by rename over the file (sed -i)', async () => {
    await breakModel();
    const served = await savedBy(() =>
      execFileSync('sed', [
        '-i',
        's/sum(amout) AS total_amount/sum(amount) AS total_amount, 1 AS by_sed/',
        sql,
      ]),
    );
    expect(served).toEqual(['month', 'total_amount', 'by_sed']);
  }, 120000);

  it("a save by rename with a backup (vim's default: file~ kept, a new file written)", async () => {
    await breakModel();
    const served = await savedBy(() => {
      renameSync(sql, `${sql}~`);
      writeFileSync(sql, withColumn('by_vim'));
      unlinkSync(`${sql}~`);
    });
    expect(served).toEqual(['month', 'total_amount', 'by_vim']);
  }, 120000);

  it('a file written elsewhere and moved in over the old one (an IDE safe write)', async () => {
    await breakModel();
    const elsewhere = join(dir.path, 'staged.sql');
    writeFileSync(elsewhere, withColumn('moved_in'));
    const served = await savedBy(() => renameSync(elsewhere, sql));
    expect(served).toEqual(['month', 'total_amount', 'moved_in']);
  }, 120000);

  it('a file replaced in place (truncated and written, cp over it)', async () => {
    await breakModel();
    const copy = join(dir.path, 'copy.sql');
    writeFileSync(copy, withColumn('copied'));
    const served = await savedBy(() => cpSync(copy, sql));
    expect(served).toEqual(['month', 'total_amount', 'copied']);
  }, 120000);

  it('a file deleted, then written again later', async () => {
    const refusals = refusalCount();
    unlinkSync(sql);
    // Without its model the dataset is a problem of the project: refused, the old build still served.
    await dev.waitFor(() => refusalCount() > refusals);
    expect(await fields()).toEqual(['month', 'total_amount', 'copied']);
    const served = await savedBy(() => writeFileSync(sql, withColumn('recreated')));
    expect(served).toEqual(['month', 'total_amount', 'recreated']);
  }, 120000);

  it('a new model in a new folder, which the broken model was missing', async () => {
    const refusals = refusalCount();
    writeFileSync(
      sql,
      original
        .replace(
          'sum(amount) AS total_amount',
          'sum(amount) AS total_amount, any_value(x.k) AS from_new',
        )
        .replace(
          "{{ ref('expense_details') }}",
          "{{ ref('expense_details') }} CROSS JOIN {{ ref('new_model') }} x",
        ),
    );
    await dev.waitFor(() => refusalCount() > refusals);
    const served = await savedBy(() => {
      mkdirSync(join(project, 'models', 'added', 'deeper'), { recursive: true });
      writeFileSync(join(project, 'models', 'added', 'deeper', 'new_model.yml'), 'kind: build\n');
      writeFileSync(join(project, 'models', 'added', 'deeper', 'new_model.sql'), 'SELECT 7 AS k\n');
    });
    expect(served).toEqual(['month', 'total_amount', 'from_new']);
    // The new folder stays watched: a change in it is checked too.
    const more = refusalCount();
    writeFileSync(join(project, 'models', 'added', 'deeper', 'new_model.sql'), 'SELEC 7 AS k\n');
    await dev.waitFor(() => refusalCount() > more);
    // And a folder deleted whole, with the model that needed it put back as it was.
    const restored = await savedBy(() => {
      rmSync(join(project, 'models', 'added'), { recursive: true });
      writeFileSync(sql, original);
    });
    expect(restored).toEqual(['month', 'total_amount']);
  }, 120000);

  it("reports a file's problem and another model's SQL problem in one check, as validate does", async () => {
    const refusals = refusalCount();
    const stray = join(project, 'models', 'stray.yml');
    const from = dev.stderr.length;
    writeFileSync(stray, 'kind: nonsense\n');
    writeFileSync(join(project, 'models', 'stray.sql'), 'SELECT 1 AS one\n');
    writeFileSync(sql, broken());
    await dev.waitFor(
      () => refusalCount() > refusals && /in its SQL \(\d+\)/.test(dev.stderr.slice(from)),
    );
    const report = dev.stderr.slice(from);
    expect(report).toMatch(/in its files \(\d+\):[\s\S]*stray\.yml/);
    expect(report).toMatch(/in its SQL \(\d+\):[\s\S]*expenses_by_month\.sql/);
    const served = await savedBy(() => {
      rmSync(stray);
      rmSync(join(project, 'models', 'stray.sql'));
      writeFileSync(sql, original);
    });
    expect(served).toEqual(['month', 'total_amount']);
  }, 120000);

  it('project.yml saved by rename, after a broken save', async () => {
    const yml = join(project, 'project.yml');
    const manifest = readFileSync(yml, 'utf8');
    const refusals = refusalCount();
    writeFileSync(yml, `${manifest}\nparameters: [unclosed\n`);
    await dev.waitFor(() => refusalCount() > refusals);
    const builds = buildCount();
    const staged = join(project, '.project.yml.tmp');
    writeFileSync(staged, manifest.replace('label: Expenses\n', 'label: Expenses, renamed\n'));
    renameSync(staged, yml);
    await dev.waitFor(() => buildCount() > builds);
    expect((await api.get(P)).body).toMatchObject({ label: 'Expenses, renamed' });
  }, 120000);
});
