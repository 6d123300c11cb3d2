import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EXAMPLE_PARAMETER_NAMES } from '@/core/parameters/__fixtures__/example-parameters';
import { ProjectError } from '@/core/project-errors';
import { loadProject, readProjectName } from '@/core/project/project-loader';

const EXAMPLE = join(__dirname, '..', '..', '..', 'examples', 'expenses');

function projectWith(manifest: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'drey-project-'));
  writeFileSync(join(dir, 'project.yml'), manifest);
  return dir;
}

function projectOf(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'drey-project-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

function problemsOf(dir: string): string[] {
  try {
    loadProject(dir);
  } catch (error) {
    if (error instanceof ProjectError)
      return error.problems.map((p) => `${p.file}|${p.path}|${p.message}`);
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [];
}

describe('loadProject', () => {
  it('loads the example project', () => {
    const project = loadProject(EXAMPLE);
    expect(project).toMatchObject({
      name: 'expenses',
      label: 'Expenses',
      majorVersion: 1,
      manifestFile: 'project.yml',
      userFields: [{ name: 'role', type: 'string', default: 'employee' }],
    });
    expect(project.models.map((model) => `${model.name}:${model.kind}`)).toEqual([
      'categories:seed',
      'expenses:seed',
      'subcategories:seed',
      'expense_details:build',
      'expense_transactions:runtime',
      'expenses_by_month:runtime',
      'expenses_grouped:runtime',
    ]);
    expect(project.datasets.map((d) => `${d.name}:${d.scope}:${d.model}`)).toEqual([
      'expenses_by_month:public:expenses_by_month',
      'expenses_grouped:protected:expenses_grouped',
      'expense_transactions:private:expense_transactions',
    ]);
    expect(project.dashboards.map((d) => `${d.name}:${d.scope}:${d.format}:${d.template}`)).toEqual(
      [
        'expenses_dashboard:protected:png:dashboards/expenses_dashboard.html',
        'expenses_report:public:html:dashboards/expenses_report.html',
      ],
    );
    expect(project.parameterDefinitions.map((p) => (p as { name: string }).name)).toEqual(
      EXAMPLE_PARAMETER_NAMES,
    );
  });

  it('reports every problem of the manifest at once, with the path inside the file', () => {
    expect(problemsOf(projectWith('name: Bad Name\nlabel: 3\nmajor_version: -1\n'))).toEqual([
      'project.yml|name|must be a lowercase name (letters, digits, _ or -)',
      'project.yml|label|must be a string',
      'project.yml|major_version|must be a whole number from 0 up',
    ]);
  });

  it('reads build.schedule, and reports a pattern or a time zone that is not one', () => {
    const base = 'name: p\nmajor_version: 1\n';
    const dir = projectWith(`${base}build:\n  schedule: "0 6 * * 1-5"\n  timezone: Europe/Paris\n`);
    try {
      expect(loadProject(dir).schedule).toEqual({
        pattern: '0 6 * * 1-5',
        timezone: 'Europe/Paris',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(problemsOf(projectWith(`${base}build:\n  schedule: "61 * * * *"\n`))).toEqual([
      expect.stringMatching(/^project\.yml\|build\.schedule\|is not a cron pattern: .*61/),
    ]);
    expect(problemsOf(projectWith(`${base}build:\n  schedule: "* * *"\n`))).toEqual([
      'project.yml|build.schedule|must be a cron pattern of five fields (minute hour day month ' +
        'weekday) or six (seconds first), got 3',
    ]);
    expect(
      problemsOf(projectWith(`${base}build:\n  schedule: "0 6 * * *"\n  timezone: Mars/Base\n`)),
    ).toEqual([
      'project.yml|build.timezone|must be a time zone such as UTC or Europe/Paris, got "Mars/Base"',
    ]);
    // Both at once: the pattern is not left unchecked until the zone is fixed.
    expect(
      problemsOf(projectWith(`${base}build:\n  schedule: "0 25 * * *"\n  timezone: Mars/Base\n`)),
    ).toEqual([
      'project.yml|build.timezone|must be a time zone such as UTC or Europe/Paris, got "Mars/Base"',
      expect.stringMatching(/^project\.yml\|build\.schedule\|is not a cron pattern: .*25/),
    ]);
    expect(problemsOf(projectWith(`${base}build:\n  schedule: 5\n  every: 1\n`))).toEqual([
      'project.yml|build.every|is not a known key',
      'project.yml|build.schedule|must be a cron pattern in quotes, e.g. "0 6 * * *"',
    ]);
  });

  it('reports a YAML syntax error once, with its line and column', () => {
    const problems = problemsOf(projectWith('name: x\n  bad: [\n'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^project\.yml\|line \d+, column \d+\|[^:]+$/);
  });

  it('reports a missing manifest', () => {
    expect(problemsOf(mkdtempSync(join(tmpdir(), 'drey-empty-')))).toEqual([
      'project.yml||file not found',
    ]);
  });

  it('formats problems one per line, without a stack', () => {
    const error = new ProjectError([{ file: 'project.yml', path: 'name', message: 'is wrong' }]);
    expect(error.message).toBe(
      'The project is invalid (1 problem):\n  project.yml at name: is wrong',
    );
  });

  it('reports every problem of every file at once, with the file and the path inside it', () => {
    const dir = projectOf({
      'project.yml': [
        'name: bad',
        'major_version: 1',
        'colour: blue',
        'connections:',
        '  - { name: wh, kind: mysql, url_env: wh_url }',
        'parameters:',
        '  - { name: p1, widget: text, label: P1 }',
        '  - { name: p1, widget: text, label: P1 again }',
        'datasets:',
        '  - { name: d1, model: missing_model, parameters: [p1, nope] }',
        '  - { name: d2, model: uses_param, scope: secret }',
        '  - { name: d3, model: reader }',
        'dashboards:',
        '  - { name: dash, format: pdf, template: dashboards/none.html }',
        '  - { name: dash2, template: ../outside.html }',
      ].join('\n'),
      'models/a.yml': 'kind: build',
      'models/a.sql': "SELECT * FROM {{ ref('b') }}",
      'models/b.yml': 'kind: build',
      'models/b.sql': "SELECT *\nFROM {{ ref('a') }}",
      'models/no_meta.sql': 'SELECT 1',
      'models/d.yml': 'kind: build\ncolumns:\n  - { name: x, type: money, category: size }',
      'models/d.sql': "SELECT * FROM {{ ref('reader') }} JOIN {{ ref('ghost') }}",
      'models/reader.yml': 'kind: runtime\ndescripton: typo',
      'models/reader.sql': 'SELECT {{ params.p1 }}',
      'models/uses_param.yml': 'kind: runtime',
      'models/uses_param.sql': 'SELECT {{ params.p1 }} FROM {{ ref(name) }}',
      'models/broken.yml': 'kind: build',
      'models/broken.sql': 'SELECT 1\n{% if %}',
      'models/view.yml': 'kind: dbview',
      'models/view.sql': 'SELECT 1',
      'seeds/s.csv': 'a,b\n1,2\n',
      'seeds/s.yml': 'columns:\n  - { name: c, type: integer }',
    });
    expect(problemsOf(dir)).toEqual([
      'project.yml|colour|is not a known key',
      'project.yml|connections[0].kind|must be one of postgres',
      'project.yml|connections[0].url_env|must name the environment variable holding the URL (upper case, for example WAREHOUSE_URL)',
      'project.yml|parameters[1].name|parameter "p1" is defined twice',
      'seeds/s.yml|columns[0].name|seeds/s.csv has no column "c"',
      'models/broken.sql|line 2|unexpected token: %}',
      'models/d.yml|columns[0].type|must be one of string, integer, number, decimal, boolean, date, datetime, time (or decimal(p,s))',
      'models/d.yml|columns[0].category|must be one of dimension, measure, misc',
      "models/no_meta.sql||needs a no_meta.yml beside it that says at least the model's kind",
      'models/reader.yml|descripton|is not a known key; did you mean "description"?',
      "models/uses_param.sql|line 1|ref() takes the model's name in quotes: ref('name')",
      'models/view.yml|connection|must name one of the connections of project.yml',
      'models/d.sql|line 1|ref(\'reader\'): "reader" is a runtime model; build models read only seeds, sources and build models',
      'models/d.sql|line 1|ref(\'ghost\'): no model named "ghost"',
      'models/b.sql|line 2|ref cycle: a -> b -> a',
      'project.yml|datasets[0].parameters[1]|no parameter named "nope"',
      'project.yml|datasets[0].model|no model named "missing_model"',
      'project.yml|datasets[1].scope|must be one of public, protected, private',
      'project.yml|datasets[2].parameters|must include "p1": models/reader.sql line 1 reads params.p1',
      'project.yml|dashboards[0].format|must be one of html, png',
      'project.yml|dashboards[0].template|file "dashboards/none.html" not found',
      'project.yml|dashboards[1].template|must be a path inside the project',
      // The parameters domain checks the definitions too, after the loader's own checks.
      'project.yml|parameters[1].name|"p1" is defined twice',
    ]);
  });
});

describe('readProjectName', () => {
  it('reads the name alone, even of a project whose models are broken', () => {
    expect(readProjectName(EXAMPLE)).toBe('expenses');
    const broken = projectOf({
      'project.yml': 'name: shop\nmajor_version: 1\n',
      'models/bad.sql': 'SELECT {{ unclosed',
    });
    expect(readProjectName(broken)).toBe('shop');
    rmSync(broken, { recursive: true, force: true });
  });

  it('refuses a manifest without a usable name, as the loader does', () => {
    for (const manifest of ['major_version: 1\n', 'name: Not A Name\n', 'name: [a\n']) {
      const dir = projectWith(manifest);
      expect(() => readProjectName(dir)).toThrow(ProjectError);
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => readProjectName('/nonexistent/drey-project')).toThrow(/project folder not found/);
  });
});
