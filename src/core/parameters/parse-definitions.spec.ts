import { parse } from 'yaml';
import { ROLE, exampleRaw } from '@/core/parameters/__fixtures__/example-parameters';
import { Decimal } from '@/core/parameters/decimal';
import type { ParameterDefinition } from '@/core/parameters/parameter-definition';
import { parseParameterDefinitions } from '@/core/parameters/parse-definitions';
import { Problems } from '@/core/project-errors';

function parseYaml(yaml: string): { defs: ParameterDefinition[]; problems: string[] } {
  const problems = new Problems();
  const raw = (parse(yaml) as { parameters: unknown }).parameters;
  const defs = parseParameterDefinitions(raw, {
    file: 'project.yml',
    userFields: [ROLE],
    problems,
  });
  return { defs, problems: problems.list.map((p) => `${p.file}|${p.path}|${p.message}`) };
}

const problemsOf = (yaml: string) => parseYaml(yaml).problems;

const GROUP_BY = `
  - name: group_by
    widget: single_select
    label: Group By
    options: [{ id: trans, label: Transaction }, { id: day, label: Day }]`;

describe('parseParameterDefinitions', () => {
  it('parses the example project without a problem', () => {
    const problems = new Problems();
    const defs = parseParameterDefinitions(exampleRaw(), {
      file: 'project.yml',
      userFields: [ROLE],
      problems,
    });
    expect(problems.list).toEqual([]);
    expect(defs).toHaveLength(11);
  });

  it('accepts no parameters at all', () => {
    const problems = new Problems();
    expect(parseParameterDefinitions(undefined, { file: 'p', userFields: [], problems })).toEqual(
      [],
    );
    expect(problems.list).toEqual([]);
  });

  it('reads numbers exactly and option ids as strings', () => {
    const { defs, problems } = parseYaml(`
parameters:
  - { name: step, widget: number, label: Step, min: 0, max: 1, increment: 0.1, default: 0.3 }
  - name: level
    widget: single_select
    label: Level
    default: 2
    options: [{ id: 1, label: One }, { id: 2, label: 2, colour: red }]`);
    expect(problems).toEqual([]);
    const [step, level] = defs;
    expect(step.kind === 'value' && step.variants[0].spec).toEqual({
      widget: 'number',
      min: Decimal.parse('0'),
      max: Decimal.parse('1'),
      increment: Decimal.parse('0.1'),
      default: Decimal.parse('0.3'),
    });
    expect(level).toMatchObject({
      defaultIds: ['2'],
      options: [
        { id: '1', label: 'One', fields: {} },
        { id: '2', label: '2', fields: { colour: 'red' } },
      ],
    });
  });

  it('reports every problem of every parameter at once, each with its path', () => {
    expect(
      problemsOf(`
parameters:
  - { name: Bad-Name, widget: number, label: X }
  - { name: x_limit, widget: slider, label: X }
  - { name: ok, widget: text, label: 3, description: [], colour: red }
  - { name: ok, widget: text, label: Again }`),
    ).toEqual([
      'project.yml|parameters[0].name|must be a snake_case name (a-z, 0-9, _; not starting with x_)',
      'project.yml|parameters[1].name|must be a snake_case name (a-z, 0-9, _; not starting with x_)',
      'project.yml|parameters[1].widget|must be one of single_select, multi_select, date, date_range, number, number_range, text',
      'project.yml|parameters[2].label|is required: a string',
      'project.yml|parameters[2].description|must be a string',
      'project.yml|parameters[2].colour|is not a known key of a text parameter',
      'project.yml|parameters[3].name|"ok" is defined twice',
    ]);
  });

  it('reports a misspelt key as an unknown key with a hint, not only as a missing widget', () => {
    expect(
      problemsOf(`
parameters:
  - { name: end_date, widgit: date, label: End }
  - { name: start_date, widget: date, label: Start, min: 2024-01-01, max: 2024-12-31, defualt: 2024-01-01 }`),
    ).toEqual([
      'project.yml|parameters[0].widget|is required: one of single_select, multi_select, date, date_range, number, number_range, text',
      'project.yml|parameters[0].widgit|is not a known key of a parameter; did you mean "widget"?',
      'project.yml|parameters[1].defualt|is not a known key of a date parameter; did you mean "default"?',
    ]);
  });

  it('refuses a list that is not a list', () => {
    expect(problemsOf('parameters: {a: 1}')).toEqual([
      'project.yml|parameters|must be a list of parameters',
    ]);
  });

  describe('select options', () => {
    it('wants options or options_from, with ids and labels, ids unique', () => {
      expect(
        problemsOf(`
parameters:
  - { name: a, widget: single_select, label: A }
  - { name: b, widget: multi_select, label: B, options: [] }
  - name: c
    widget: single_select
    label: C
    options: [{ id: x, label: X }, { id: x, label: Again }, { label: No id }, { id: y }, plain, { id: z, label: Z, 1st: bad }]
  - { name: d, widget: single_select, label: D, options: [{id: a, label: A}], options_from: { sql: SELECT 1 } }
  - { name: e, widget: single_select, label: E, options_from: SELECT 1 }`),
      ).toEqual([
        'project.yml|parameters[0].options|is required (or options_from: a query giving the options)',
        'project.yml|parameters[1].options|must be a non-empty list of options (id, label)',
        'project.yml|parameters[2].options[2].id|is required: a non-empty string or number',
        'project.yml|parameters[2].options[3].label|is required: a string',
        'project.yml|parameters[2].options[4]|must be a mapping with id and label',
        'project.yml|parameters[2].options[5].1st|a custom field name must be letters, digits and _ (not starting with a digit)',
        'project.yml|parameters[2].options[1].id|"x" is used by another option',
        'project.yml|parameters[3].options_from|give either options or options_from, not both',
        'project.yml|parameters[4].options_from|must be a mapping with `sql`: the query to run at build time',
      ]);
    });

    it('checks defaults, show_select_all and order_matters', () => {
      expect(
        problemsOf(`
parameters:
  - { name: a, widget: single_select, label: A, default: nope, options: [{id: x, label: X}] }
  - { name: b, widget: multi_select, label: B, default: x, options: [{id: x, label: X}] }
  - { name: c, widget: multi_select, label: C, default: [x, y], show_select_all: yes, order_matters: 1, options: [{id: x, label: X}] }
  - { name: d, widget: single_select, label: D, order_matters: true, options: [{id: x, label: X}] }`),
      ).toEqual([
        'project.yml|parameters[1].default|must be a list of option ids',
        'project.yml|parameters[2].show_select_all|must be true or false',
        'project.yml|parameters[2].order_matters|must be true or false',
        'project.yml|parameters[3].order_matters|is not a known key of a single_select parameter',
        'project.yml|parameters[0].default|"nope" is not an option id',
        'project.yml|parameters[2].default|"y" is not an option id',
      ]);
    });

    it('matches user_groups against an existing user field, values fitting the field', () => {
      expect(
        problemsOf(`
parameters:
  - name: a
    widget: single_select
    label: A
    options: [{ id: x, label: X, user_groups: [manager] }]
  - name: b
    widget: single_select
    label: B
    user_group_field: team
    options: [{ id: x, label: X }]
  - name: c
    widget: single_select
    label: C
    user_group_field: role
    options:
      - { id: x, label: X, user_groups: [manager, boss, 3] }
      - { id: y, label: Y, user_groups: [] }
      - { id: z, label: Z, user_group: employee }`),
      ).toEqual([
        'project.yml|parameters[0].options[0].user_groups|needs `user_group_field` on the parameter: the user field to match',
        'project.yml|parameters[1].user_group_field|"team" is not a user field (user fields: role)',
        'project.yml|parameters[2].options[0].user_groups|"boss" is not one of "manager", "employee"',
        'project.yml|parameters[2].options[0].user_groups|3 is not a string value of the user field "role"',
        'project.yml|parameters[2].options[1].user_groups|must be a non-empty list of values of the user field "role"',
      ]);
    });
  });

  describe('parents', () => {
    it('reports an unknown parent, a non-select parent, and a cycle', () => {
      expect(
        problemsOf(`
parameters:
  - { name: when, widget: date, label: When, min: 2024-01-01, max: 2024-12-31 }
  - { name: a, widget: single_select, label: A, parent: nowhere, options: [{id: x, label: X, parent_option_ids: [q]}] }
  - { name: b, widget: single_select, label: B, parent: when, options: [{id: x, label: X, parent_option_ids: [q]}] }
  - { name: c, widget: single_select, label: C, parent: d, options: [{id: x, label: X, parent_option_ids: [x]}] }
  - { name: d, widget: single_select, label: D, parent: c, options: [{id: x, label: X, parent_option_ids: [x]}] }`),
      ).toEqual([
        'project.yml|parameters[1].parent|"nowhere" is not a parameter of the project',
        'project.yml|parameters[2].parent|"when" is a date parameter; a parent must be a single_select or multi_select',
        'project.yml|parameters[3].parent|parents form a cycle: c -> d -> c',
      ]);
    });

    it('wants parent_option_ids on every option of a child, naming options of the parent', () => {
      expect(
        problemsOf(`
parameters:${GROUP_BY}
  - name: child
    widget: multi_select
    label: Child
    parent: group_by
    options:
      - { id: a, label: A, parent_option_ids: [trans, nope] }
      - { id: b, label: B }
      - { id: c, label: C, parent_option_id: day }
      - { id: d, label: D, parent_option_ids: [] }
  - { name: orphan, widget: single_select, label: O, options: [{ id: a, label: A, parent_option_id: day }] }`),
      ).toEqual([
        "project.yml|parameters[1].options[1].parent_option_ids|is required: the parent's option ids",
        'project.yml|parameters[1].options[3].parent_option_ids|must be a non-empty list of option ids of the parent',
        'project.yml|parameters[2].options[0].parent_option_id|needs a parent: set `parent` on the parameter',
        'project.yml|parameters[1].options[0].parent_option_ids|"nope" is not an option id of "group_by"',
      ]);
    });

    it('lets a non-select child have a parent only through variants, one variant per parent id', () => {
      expect(
        problemsOf(`
parameters:${GROUP_BY}
  - { name: plain_child, widget: number, label: N, parent: group_by, min: 0, max: 10 }
  - name: limit
    widget: number
    label: Limit
    parent: group_by
    variants:
      - { parent_option_ids: [trans], min: 0, max: 1000, increment: 10, default: 1000 }
      - { parent_option_ids: [trans, day], min: 0, max: 10 }
      - { parent_option_ids: [nope], min: 0, max: 10, colour: red }
  - name: no_parent
    widget: text
    label: T
    default: x
    variants: [{ parent_option_ids: [trans] }]`),
      ).toEqual([
        "project.yml|parameters[1].parent|a number parameter with a parent needs `variants`: its widget per set of the parent's option ids",
        'project.yml|parameters[2].variants[1].parent_option_ids|parent option "trans" is already in parameters[2].variants[0]: one parent option id can have one variant',
        'project.yml|parameters[2].variants[2].colour|is not a known key of a number variant',
        'project.yml|parameters[3].default|belongs inside each variant',
        'project.yml|parameters[3].variants|need a parent: set `parent` to a select parameter',
        'project.yml|parameters[2].variants[2].parent_option_ids|"nope" is not an option id of "group_by"',
      ]);
    });
  });

  describe('numbers', () => {
    it('reports bounds, increments and defaults that do not fit', () => {
      expect(
        problemsOf(`
parameters:
  - { name: a, widget: number, label: A }
  - { name: b, widget: number, label: B, min: ten, max: 5, increment: 0 }
  - { name: c, widget: number, label: C, min: 10, max: 5 }
  - { name: d, widget: number, label: D, min: 0, max: 10, increment: 3 }
  - { name: e, widget: number, label: E, min: 0, max: 1000, increment: 10, default: 1005 }
  - { name: f, widget: number, label: F, min: 0, max: 1000, increment: 10, default: 15 }
  - { name: g, widget: number, label: G, min: 0, max: 1, increment: 0.1, default: 0.35 }
  - { name: h, widget: number, label: H, min: 0, max: 1, increment: -0.5 }
  - { name: i, widget: number, label: I, min: 0, max: 1, increment: '1e-20', default: '0.12345678901234567891' }`),
      ).toEqual([
        'project.yml|parameters[0].min|is required',
        'project.yml|parameters[0].max|is required',
        'project.yml|parameters[1].min|"ten" is not a number',
        'project.yml|parameters[1].increment|0 must be greater than 0',
        'project.yml|parameters[2].max|5 is below min 10',
        'project.yml|parameters[3].max|max - min (10) is not a multiple of the increment 3',
        'project.yml|parameters[4].default|1005 is above the maximum 1000',
        'project.yml|parameters[5].default|15 is not a multiple of the increment 10 from 0',
        'project.yml|parameters[6].default|0.35 is not a multiple of the increment 0.1 from 0',
        'project.yml|parameters[7].increment|-0.5 must be greater than 0',
        'project.yml|parameters[8].default|0.12345678901234567891 has too many digits to be a JSON number exactly',
      ]);
    });

    it('accepts increments of 0.1 exactly, and number ranges within bounds', () => {
      expect(
        problemsOf(`
parameters:
  - { name: a, widget: number, label: A, min: 0.1, max: 0.3, increment: 0.1, default: 0.2 }
  - { name: b, widget: number_range, label: B, min: 0, max: 300, default: [10, 20.0] }`),
      ).toEqual([]);
      expect(
        problemsOf(`
parameters:
  - { name: b, widget: number_range, label: B, min: 0, max: 300, default: [20, 10] }
  - { name: c, widget: number_range, label: C, min: 0, max: 300, default: [0, 301] }
  - { name: d, widget: number_range, label: D, min: 0, max: 300, default: 5 }`),
      ).toEqual([
        'project.yml|parameters[0].default|lower 20 is above upper 10',
        'project.yml|parameters[1].default|301 is above the maximum 300',
        'project.yml|parameters[2].default|must be a list of two values [lower, upper], each a number',
      ]);
    });
  });

  describe('dates and texts', () => {
    it('wants real YYYY-MM-DD dates with min <= default <= max', () => {
      expect(
        problemsOf(`
parameters:
  - { name: a, widget: date, label: A, min: 2024-01-01, max: 2024-02-30 }
  - { name: b, widget: date, label: B, min: 2024-12-31, max: 2024-01-01 }
  - { name: c, widget: date, label: C, min: 2024-01-01, max: 2024-12-31, default: 2025-01-01 }
  - { name: d, widget: date_range, label: D, min: 2024-01-01, max: 2024-12-31, default: [2024-06-01, 2024-05-01] }
  - { name: e, widget: date_range, label: E, min: 2024-01-01, max: 2024-12-31, default: [2023-06-01, null] }
  - { name: f, widget: date, label: F, min: 01/01/2024, max: 2024-12-31 }`),
      ).toEqual([
        'project.yml|parameters[0].max|"2024-02-30" is not a date YYYY-MM-DD',
        'project.yml|parameters[1].max|2024-01-01 is before min 2024-12-31',
        'project.yml|parameters[2].default|2025-01-01 is after the latest date 2024-12-31',
        'project.yml|parameters[3].default|start 2024-06-01 is after end 2024-05-01',
        'project.yml|parameters[4].default|2023-06-01 is before the earliest date 2024-01-01',
        'project.yml|parameters[5].min|"01/01/2024" is not a date YYYY-MM-DD',
      ]);
    });

    it('knows the nine input types and checks the default text against its type', () => {
      const types = [
        'text',
        'textarea',
        'number',
        'date',
        'datetime-local',
        'month',
        'time',
        'color',
        'password',
      ];
      const valid = [
        'x',
        'a\nb',
        '-1.5',
        '2024-02-29',
        '2024-02-29T13:45',
        '2024-02',
        '13:45:30',
        '#A0b1C2',
        's3cret',
      ];
      const yaml = types
        .map(
          (type, i) =>
            `  - { name: t${i}, widget: text, label: T, input_type: ${type}, default: ${JSON.stringify(valid[i])} }`,
        )
        .join('\n');
      expect(problemsOf(`parameters:\n${yaml}`)).toEqual([]);
      expect(
        problemsOf(`
parameters:
  - { name: a, widget: text, label: A, input_type: email }
  - { name: b, widget: text, label: B, input_type: number, default: ten }
  - { name: c, widget: text, label: C, input_type: date, default: 2024-13-01 }
  - { name: d, widget: text, label: D, input_type: color, default: red }
  - { name: e, widget: text, label: E, input_type: time, default: '25:00' }
  - { name: f, widget: text, label: F, input_type: month, default: 2024-13 }
  - { name: g, widget: text, label: G, input_type: datetime-local, default: 2024-02-30T10:00 }
  - { name: h, widget: text, label: H, default: [a] }`),
      ).toEqual([
        'project.yml|parameters[0].input_type|must be one of text, textarea, number, date, datetime-local, month, time, color, password',
        'project.yml|parameters[1].default|"ten" is not a decimal number (input_type number)',
        'project.yml|parameters[2].default|"2024-13-01" is not a date YYYY-MM-DD (input_type date)',
        'project.yml|parameters[3].default|"red" is not a colour #rrggbb (input_type color)',
        'project.yml|parameters[4].default|"25:00" is not a time HH:MM (input_type time)',
        'project.yml|parameters[5].default|"2024-13" is not a month YYYY-MM (input_type month)',
        'project.yml|parameters[6].default|"2024-02-30T10:00" is not a local date and time YYYY-MM-DDTHH:MM (input_type datetime-local)',
        'project.yml|parameters[7].default|must be text',
      ]);
    });
  });

  describe('from_query', () => {
    it('keeps the SQL and checks the values written beside it', () => {
      const { defs, problems } = parseYaml(`
parameters:
  - name: a
    widget: date
    label: A
    max: 2024-12-31
    from_query: { sql: SELECT min(date) AS min FROM t }
  - { name: b, widget: number, label: B, increment: x, from_query: { sql: SELECT 1 AS min } }
  - { name: c, widget: text, label: C, from_query: { sql: SELECT 'x' AS default } }
  - { name: d, widget: number, label: D, from_query: { sql: '  ', table: t } }`);
      expect(problems).toEqual([
        'project.yml|parameters[1].increment|"x" is not a number',
        'project.yml|parameters[2].from_query|is for date, date_range, number and number_range parameters',
        'project.yml|parameters[3].from_query|must be a mapping with `sql`: the query to run at build time',
      ]);
      expect(defs[0]).toMatchObject({
        variants: [],
        fromQuery: { sql: 'SELECT min(date) AS min FROM t', written: { max: '2024-12-31' } },
      });
    });
  });
});
