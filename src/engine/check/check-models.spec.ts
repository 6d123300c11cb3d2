import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '@/engine/engine';
import { buildCatalog } from '@/core/parameters/resolve-parameters';
import type { ProjectProblem } from '@/core/project-errors';
import { loadProject } from '@/core/project/project-loader';

const EXAMPLE = join(__dirname, '../../../examples/expenses');

describe('checkModels on copies of the example', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'drey-check-'));
    cpSync(EXAMPLE, join(dir, 'project'), { recursive: true });
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function edit(file: string, from: string, to: string): void {
    const path = join(dir, 'project', file);
    const before = readFileSync(path, 'utf8');
    expect(before).toContain(from);
    writeFileSync(path, before.replace(from, to));
  }

  /** The problems the check finds, planned on a build of the copy (as a build checks before its switch). */
  async function problems(): Promise<string[]> {
    const project = loadProject(join(dir, 'project'));
    const engine = new Engine(project, { dataDir: join(dir, 'data') });
    let found: ProjectProblem[] = [];
    try {
      await engine.open();
      await engine.build('check', {
        beforeSwitch: async (built) => {
          found = await built.checkModels(await buildCatalog(project, (sql) => built.query(sql)));
        },
      });
    } finally {
      await engine.close();
    }
    return found.map((p) => `${p.file}|${p.path}|${p.message.split('\n', 1)[0]}`);
  }

  it('finds nothing wrong with the example as it is', async () => {
    expect(await problems()).toEqual([]);
  });

  it('reports an unknown column and SELEC in two models at once, and a model over a broken one once', async () => {
    edit('models/expense_transactions.sql', 'description, amount', 'description, amountt');
    edit('models/expenses_by_month.sql', 'SELECT month', 'SELEC month');
    edit('models/expenses_grouped.sql', 'GROUP BY ALL', 'GROUP BY ALL HAVING lowr(1) > 0');
    expect(await problems()).toEqual([
      expect.stringMatching(
        /^models\/expense_transactions\.sql\|line 2, column 54\|Binder Error: .*"amountt"/,
      ),
      expect.stringMatching(
        /^models\/expenses_by_month\.sql\|line 1, column 1\|Parser Error: .*"SELEC"/,
      ),
    ]);
  });

  it('reports sum(amout) in a runtime model at its line and column', async () => {
    edit('models/expenses_by_month.sql', 'sum(amount)', 'sum(amout)');
    expect(await problems()).toEqual([
      expect.stringMatching(
        /^models\/expenses_by_month\.sql\|line 1, column 19\|Binder Error: .*"amout"/,
      ),
    ]);
  });

  it('reports an unknown function on a line after template tags', async () => {
    edit('models/expense_transactions.sql', 'lower(description)', 'lowr(description)');
    expect(await problems()).toEqual([
      expect.stringMatching(
        /^models\/expense_transactions\.sql\|line 12, column 16\|Catalog Error: .*lowr/,
      ),
    ]);
  });

  it('reports an unknown table', async () => {
    edit('models/expenses_by_month.sql', "FROM {{ ref('expense_details') }}", 'FROM nope');
    expect(await problems()).toEqual([
      expect.stringMatching(
        /^models\/expenses_by_month\.sql\|line 2, column 6\|Catalog Error: .*nope/,
      ),
    ]);
  });

  it('reports a column that only one option of group_by pastes into the SQL', async () => {
    edit('project.yml', 'columns: category, subcategory', 'columns: category, subcategoryy');
    expect(await problems()).toEqual([
      expect.stringMatching(
        /^models\/expenses_grouped\.sql\|line 4\|Binder Error: .*"subcategoryy"/,
      ),
    ]);
  });

  it('reports a statement that ends too early at its end', async () => {
    edit('models/expenses_by_month.sql', 'ORDER BY month DESC', 'ORDER BY month DESC,');
    expect(await problems()).toEqual([
      expect.stringMatching(
        /^models\/expenses_by_month\.sql\|line 7, column 21\|Parser Error: syntax error at end of input/,
      ),
    ]);
  });

  it('reports a declared column type that the query contradicts, in a runtime and a build model', async () => {
    // A DOUBLE would be served as `number` while the OpenAPI document says `decimal`.
    edit('models/expenses_by_month.sql', 'sum(amount) AS', 'CAST(sum(amount) AS DOUBLE) AS');
    edit('models/expense_details.sql', 'e.id,', 'CAST(e.id AS VARCHAR) AS id,');
    const id = (file: string) =>
      `models/${file}.yml|columns[0].type|is integer, but the query gives VARCHAR, which clients receive as string: declare it string, or cast it in the SQL to a type served as integer`;
    // The runtime models that pass the build model's id on are told of it too.
    expect(await problems()).toEqual([
      id('expense_details'),
      id('expense_transactions'),
      'models/expenses_by_month.yml|columns[1].type|is decimal, but the query gives DOUBLE, which clients receive as number: declare it number, or cast it in the SQL (CAST(... AS DECIMAL(18,3)))',
      id('expenses_grouped'),
    ]);
  });

  it('reports bad YAML in a model file once, at the line where it is', () => {
    edit('models/expenses_by_month.yml', 'kind: runtime', 'kind: [runtime');
    expect(() => loadProject(join(dir, 'project'))).toThrow(
      expect.objectContaining({
        problems: [
          expect.objectContaining({
            file: 'models/expenses_by_month.yml',
            path: 'line 1, column 7',
          }),
        ],
      }),
    );
  });
});
