import { parse } from 'yaml';
import {
  ANONYMOUS,
  EMPLOYEE,
  EXAMPLE_ROWS,
  MANAGER,
  ROLE,
  exampleRaw,
} from '@/core/parameters/__fixtures__/example-parameters';
import type { ParameterDefinition } from '@/core/parameters/parameter-definition';
import { parseParameterDefinitions } from '@/core/parameters/parse-definitions';
import { parameterQueries, resolveParameters } from '@/core/parameters/resolve-parameters';
import { emptyParameterRequest } from '@/core/parameters/selection-request';
import type { CallerView } from '@/core/parameters/selection-value';
import { Problems } from '@/core/project-errors';
import type { UserField } from '@/core/user-fields';

const LEVEL: UserField = { name: 'level', type: 'integer', required: false, description: '' };

function definitions(yaml: string): ParameterDefinition[] {
  const problems = new Problems();
  const raw = (parse(yaml) as { parameters: unknown }).parameters;
  const defs = parseParameterDefinitions(raw, {
    file: 'project.yml',
    userFields: [ROLE, LEVEL],
    problems,
  });
  problems.throwIfAny();
  return defs;
}

function resolve(defs: ParameterDefinition[], results: Record<string, Record<string, unknown>[]>) {
  const problems = new Problems();
  const catalog = resolveParameters(defs, results, { file: 'project.yml', problems });
  return { catalog, problems: problems.list.map((p) => `${p.path}|${p.message}`) };
}

describe('parameterQueries', () => {
  it('lists the queries of options_from and from_query, in the project order', () => {
    const problems = new Problems();
    const defs = parseParameterDefinitions(exampleRaw(), {
      file: 'p',
      userFields: [ROLE],
      problems,
    });
    expect(parameterQueries(defs)).toEqual([
      {
        parameter: 'start_date',
        at: 'parameters[2].from_query',
        sql: "SELECT min(date) AS min, max(date) AS max, min(date) AS default FROM {{ ref('expenses') }}",
      },
      {
        parameter: 'category',
        at: 'parameters[5].options_from',
        sql: "SELECT category_id AS id, category AS label FROM {{ ref('categories') }} ORDER BY category_id",
      },
      {
        parameter: 'subcategory',
        at: 'parameters[6].options_from',
        sql: "SELECT subcategory_id AS id, subcategory AS label, category_id AS parent_option_id FROM {{ ref('subcategories') }} ORDER BY subcategory_id",
      },
    ]);
  });
});

describe('resolveParameters', () => {
  const SELECTS = `
parameters:
  - name: category
    widget: multi_select
    label: Category
    options_from: { sql: SELECT 1 }
  - name: subcategory
    widget: single_select
    label: Subcategory
    parent: category
    user_group_field: level
    options_from: { sql: SELECT 2 }`;

  it('turns query rows into options: ids as strings, other columns as custom fields', () => {
    const { catalog, problems } = resolve(definitions(SELECTS), {
      category: [
        { id: 0n, label: 'Food', colour: 'green', weight: 12n },
        { id: 1, label: 'Bills', colour: null, weight: 9007199254740993n },
      ],
      subcategory: [
        { id: 'a', label: 'Dining', parent_option_ids: [0n], user_groups: ['2', 3n] },
        { id: 'b', label: 'Power', parent_option_id: '1', user_group: null, is_default: 1 },
        { id: 'c', label: 'Gas', parent_option_ids: '[0, 1]', user_groups: '["7"]' },
      ],
    });
    expect(problems).toEqual([]);
    expect(catalog.definition('category')).toMatchObject({
      options: [
        { id: '0', label: 'Food', fields: { colour: 'green', weight: 12 } },
        { id: '1', label: 'Bills', fields: { colour: null, weight: '9007199254740993' } },
      ],
    });
    expect(catalog.definition('subcategory')).toMatchObject({
      options: [
        { id: 'a', parentOptionIds: ['0'], userGroups: [2, 3], isDefault: false },
        { id: 'b', parentOptionIds: ['1'], userGroups: null, isDefault: true },
        { id: 'c', parentOptionIds: ['0', '1'], userGroups: [7] },
      ],
    });
    const levelTwo: CallerView = { username: 'l2', isAdmin: false, fields: { level: 2 } };
    const widgets = (caller: CallerView) =>
      catalog.widgets(['subcategory'], emptyParameterRequest(), caller);
    expect(widgets(levelTwo)).toMatchObject([
      { options: [{ id: 'a' }, { id: 'b' }], selected_id: 'b' },
    ]);
    expect(widgets(ANONYMOUS)).toMatchObject([{ options: [{ id: 'b' }], selected_id: 'b' }]);
  });

  it('reports each bad row with the query and the row number', () => {
    const { problems } = resolve(definitions(SELECTS), {
      category: [
        { id: 0, label: 'Food' },
        { id: 0, label: 'Again' },
        { label: 'No id' },
        { id: 2 },
      ],
      subcategory: [
        { id: 'a', label: 'A', parent_option_id: 7 },
        { id: 'b', label: 'B', 'bad name': 1 },
        { id: 'c', label: 'C', parent_option_id: 0, is_default: 'maybe' },
        { id: 'd', label: 'D', parent_option_id: 0, user_group: 'x' },
      ],
    });
    expect(problems).toEqual([
      'parameters[0].options_from|row 3, column id: is required: a non-empty string or number',
      'parameters[0].options_from|row 4, column label: is required: a string',
      'parameters[0].options_from|row 2, column id: "0" is used by another option',
      "parameters[1].options_from|row 2, column parent_option_ids: is required: the parent's option ids",
      'parameters[1].options_from|row 2, column bad name: a custom field name must be letters, digits and _ (not starting with a digit)',
      'parameters[1].options_from|row 3, column is_default: must be true or false',
      'parameters[1].options_from|row 4, column user_group: "x" is not an integer value of the user field "level"',
      'parameters[1].options_from|row 1, column parent_option_ids: "7" is not an option id of "category"',
    ]);
  });

  it('reports a query without a result, and a query without rows', () => {
    expect(resolve(definitions(SELECTS), { category: [] }).problems).toEqual([
      'parameters[0].options_from|the query returned no rows',
      'parameters[1].options_from|the query has no result: it did not run',
    ]);
  });

  it('checks a written default against the options of the query', () => {
    const defs = definitions(`
parameters:
  - { name: a, widget: multi_select, label: A, default: [x, y], options_from: { sql: SELECT 1 } }`);
    expect(resolve(defs, { a: [{ id: 'x', label: 'X' }] }).problems).toEqual([
      'parameters[0].default|"y" is not an option id',
    ]);
  });

  it('checks written children against the options of a parent from a query', () => {
    const defs = definitions(`
parameters:
  - { name: a, widget: single_select, label: A, options_from: { sql: SELECT 1 } }
  - name: b
    widget: number
    label: B
    parent: a
    variants: [{ parent_option_ids: [x, z], min: 0, max: 10 }]`);
    expect(resolve(defs, { a: [{ id: 'x', label: 'X' }] }).problems).toEqual([
      'parameters[1].variants[0].parent_option_ids|"z" is not an option id of "a"',
    ]);
  });

  describe('from_query', () => {
    const BOUNDS = `
parameters:
  - { name: day, widget: date, label: Day, from_query: { sql: SELECT 1 } }
  - { name: span, widget: date_range, label: Span, max: 2024-12-31, from_query: { sql: SELECT 2 } }
  - { name: amount, widget: number, label: Amount, increment: 0.5, from_query: { sql: SELECT 3 } }
  - { name: between, widget: number_range, label: Between, default: [1, 2], from_query: { sql: SELECT 4 } }`;

    it('completes the widget from one row; written values fill what the row leaves out', () => {
      const { catalog, problems } = resolve(definitions(BOUNDS), {
        day: [{ min: '2024-01-01', max: new Date(Date.UTC(2024, 11, 31)), default: null }],
        span: [{ min: '2024-03-01', max: null, default_start: '2024-04-01' }],
        amount: [{ min: '0.5', max: 10n, default: 2.5 }],
        between: [{ min: 0, max: '100', increment: '0.25', default_upper: 50 }],
      });
      expect(problems).toEqual([]);
      expect(catalog.widgets(catalog.names(), emptyParameterRequest(), EMPLOYEE)).toEqual([
        expect.objectContaining({
          min_date: '2024-01-01',
          max_date: '2024-12-31',
          selected_date: '2024-01-01',
        }),
        expect.objectContaining({
          min_date: '2024-03-01',
          max_date: '2024-12-31',
          selected_start_date: '2024-04-01',
          selected_end_date: '2024-12-31',
        }),
        expect.objectContaining({
          min_value: 0.5,
          max_value: 10,
          increment: 0.5,
          selected_value: 2.5,
        }),
        expect.objectContaining({
          min_value: 0,
          max_value: 100,
          increment: 0.25,
          selected_lower_value: 1,
          selected_upper_value: 50,
        }),
      ]);
    });

    it('wants exactly one row with known columns and values that fit', () => {
      const { problems } = resolve(definitions(BOUNDS), {
        day: [],
        span: [{ min: '2024-03-01', max: '2024-02-01' }, { min: '2024-01-01' }],
        amount: [{ min: 'low', max: 10, default: 3.25, maximum: 3 }],
        between: [{ min: 0, max: 1 }],
      });
      expect(problems).toEqual([
        'parameters[0].from_query|the query must return one row; it returned 0',
        'parameters[1].from_query|the query must return one row; it returned 2',
        'parameters[2].from_query|unknown column maximum; expected min, max, increment, default',
        'parameters[2].from_query|row 1, column min: "low" is not a number',
        'parameters[3].from_query|row 1, column default: 2 is above the maximum 1',
      ]);
    });
  });

  it('leaves the definitions unchanged, so each build makes a new catalog from them', () => {
    const problems = new Problems();
    const defs = parseParameterDefinitions(exampleRaw(), {
      file: 'p',
      userFields: [ROLE],
      problems,
    });
    const first = resolveParameters(defs, EXAMPLE_ROWS, { file: 'p', problems });
    const renamed = {
      ...EXAMPLE_ROWS,
      category: [{ id: 0, label: 'Food & Drink' }, ...EXAMPLE_ROWS.category.slice(1)],
    };
    const second = resolveParameters(defs, renamed, { file: 'p', problems });
    expect(problems.list).toEqual([]);
    expect(defs.find((def) => def.name === 'category')).toMatchObject({ options: [] });
    const firstOption = (catalog: typeof first) => {
      const [widget] = catalog.widgets(['category'], emptyParameterRequest(), MANAGER);
      return widget.widget_type === 'multi_select' ? widget.options[0] : undefined;
    };
    expect(firstOption(first)).toEqual({ id: '0', label: 'Food' });
    expect(firstOption(second)).toEqual({ id: '0', label: 'Food & Drink' });
  });
});
