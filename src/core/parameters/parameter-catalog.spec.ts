import { parse } from 'yaml';
import {
  ANONYMOUS,
  EMPLOYEE,
  MANAGER,
  ROLE,
  exampleCatalog,
} from '@/core/parameters/__fixtures__/example-parameters';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { parseParameterDefinitions } from '@/core/parameters/parse-definitions';
import { resolveParameters } from '@/core/parameters/resolve-parameters';
import {
  SelectionReading,
  emptyParameterRequest,
  parseBodySelections,
  parseQuerySelections,
} from '@/core/parameters/selection-request';
import { Problems } from '@/core/project-errors';

function catalogOf(yaml: string): ParameterCatalog {
  const problems = new Problems();
  const ctx = { file: 'project.yml', userFields: [ROLE], problems };
  const raw = (parse(yaml) as { parameters: unknown }).parameters;
  const catalog = resolveParameters(parseParameterDefinitions(raw, ctx), {}, ctx);
  problems.throwIfAny();
  return catalog;
}

const example = exampleCatalog();
const GROUPED = [
  'group_by',
  'limit',
  'date_range',
  'category',
  'subcategory',
  'between_filter',
  'description_filter',
];
const ALL = example.names();

/** The lenient value forms, names as sent. */
const LENIENT: SelectionReading = { forms: 'lenient', name: (sent) => sent };
const get = (query: Record<string, string | string[]>, reading?: SelectionReading) =>
  parseQuerySelections(query, reading);
const post = (body: Record<string, unknown>, reading?: SelectionReading) =>
  parseBodySelections(body, reading);
const names = (widgets: { name: string }[]) => widgets.map((widget) => widget.name);

describe('invalid selections', () => {
  const failing: [string, ReturnType<typeof get>, string][] = [
    [
      'an unknown option',
      get({ category: '9' }),
      'Parameter "category": option "9" does not exist',
    ],
    [
      'two ids for a single_select',
      get({ group_by: ['day', 'cat'] }),
      'Parameter "group_by": expects one option id, got 2 values',
    ],
    [
      'a list for a single_select',
      post({ group_by: ['day'] }),
      'Parameter "group_by": expects one option id, got ["day"]',
    ],
    [
      'a number id in the strict forms',
      post({ category: [0] }),
      'Parameter "category": expects option ids as strings, got 0',
    ],
    [
      'an id instead of a list',
      post({ category: '0' }),
      'Parameter "category": expects a list of option ids as a JSON array, got "0"',
    ],
    [
      'a number above the maximum',
      post({ group_by: 'trans', limit: 1005 }),
      'Parameter "limit": 1005 is above the maximum 1000',
    ],
    [
      'a number below the minimum',
      get({ group_by: 'trans', limit: '-10' }),
      'Parameter "limit": -10 is below the minimum 0',
    ],
    [
      'a number off the increment',
      get({ group_by: 'trans', limit: '15' }),
      'Parameter "limit": 15 is not a multiple of the increment 10 from 0',
    ],
    [
      'a number that is not one',
      get({ group_by: 'trans', limit: 'ten' }),
      'Parameter "limit": "ten" is not a number',
    ],
    [
      'a boolean for a number',
      post({ group_by: 'trans', limit: true }),
      'Parameter "limit": true is not a number',
    ],
    [
      'a bad date',
      get({ date_range: ['2024-02-30', '2024-03-01'] }),
      'Parameter "date_range": "2024-02-30" is not a date YYYY-MM-DD',
    ],
    [
      'one date for a range',
      get({ date_range: '2024-02-01' }),
      'Parameter "date_range": expects two dates (start, end), got 1 value',
    ],
    [
      'three dates for a range',
      post({ date_range: ['2024-01-01', '2024-01-02', '2024-01-03'] }),
      'Parameter "date_range": expects two dates (start, end), got 3 values',
    ],
    [
      'a reversed range',
      post({ date_range: ['2024-05-01', '2024-02-01'] }),
      'Parameter "date_range": start 2024-05-01 is after end 2024-02-01',
    ],
    [
      'a date out of bounds',
      post({ date_range: ['2023-12-31', '2024-02-01'] }),
      'Parameter "date_range": 2023-12-31 is before the earliest date 2024-01-01',
    ],
    [
      'a reversed number range',
      post({ between_filter: [20, 10] }),
      'Parameter "between_filter": lower 20 is above upper 10',
    ],
    [
      'a fractional number range',
      post({ between_filter: ['0.5', 10] }),
      'Parameter "between_filter": 0.5 is not a multiple of the increment 1 from 0',
    ],
    [
      'a comma list in the strict forms',
      get({ between_filter: '0,10' }),
      'Parameter "between_filter": expects two numbers (lower, upper), got 1 value',
    ],
    [
      'a number for a text',
      post({ description_filter: 5 }),
      'Parameter "description_filter": expects a text, got 5',
    ],
    [
      'a repeated text',
      get({ description_filter: ['a', 'b'] }),
      'Parameter "description_filter": expects one text, got 2 values',
    ],
    [
      'a bad lenient JSON list',
      get({ category: '["0",' }, LENIENT),
      'Parameter "category": "[\\"0\\"," is not a valid JSON list',
    ],
    [
      'an object in the lenient forms',
      post({ group_by: { id: 'day' } }, LENIENT),
      'Parameter "group_by": expects one option id, got {"id":"day"}',
    ],
  ];

  it.each(failing)('answers %s with a message naming the parameter', (_case, request, message) => {
    const call = () => example.widgets(GROUPED, request, MANAGER);
    expect(call).toThrow(message);
    expect(call).toThrow(expect.objectContaining({ code: 'invalid_parameter_selection' }));
    expect(() => example.selections(GROUPED, request, MANAGER)).toThrow(message);
  });
});

describe('lenient forms', () => {
  it('reads lists as comma-joined text, JSON-list text, JSON lists and repeated names', () => {
    const expected = ['0', '3'];
    const forms = [
      get({ category: '0,3' }, LENIENT),
      get({ category: ' 0 , 3 ' }, LENIENT),
      get({ category: '["0", 3]' }, LENIENT),
      get({ category: ['0', '3'] }, LENIENT),
      post({ category: [0, '3'] }, LENIENT),
      post({ category: '0,3' }, LENIENT),
      post({ category: '["0","3"]' }, LENIENT),
    ];
    for (const request of forms) {
      const { category } = example.selections(['category'], request, ANONYMOUS);
      expect(category.widget === 'multi_select' && category.selected.map((o) => o.id)).toEqual(
        expected,
      );
    }
  });

  it('reads numbers and number ranges given as numbers or strings', () => {
    for (const request of [
      get({ between_filter: '5,10' }, LENIENT),
      post({ between_filter: [5, '10'] }, LENIENT),
      post({ between_filter: '[5, 10]' }, LENIENT),
    ]) {
      expect(example.selections(['between_filter'], request, ANONYMOUS)).toEqual({
        between_filter: { widget: 'number_range', lower: '5', upper: '10' },
      });
    }
    expect(
      example.selections(['min_filter'], post({ min_filter: '20' }, LENIENT), ANONYMOUS),
    ).toEqual({
      min_filter: { widget: 'number', value: '20' },
    });
  });

  it('keeps commas inside a text and a single id', () => {
    const request = post({ description_filter: 'a,b', group_by: 'day' }, LENIENT);
    expect(
      example.selections(['description_filter', 'group_by'], request, ANONYMOUS),
    ).toMatchObject({
      description_filter: { widget: 'text', text: 'a,b' },
      group_by: { widget: 'single_select', selected: { id: 'day' } },
    });
  });

  it('takes an empty value as no option selected', () => {
    for (const request of [
      get({ category: '' }),
      get({ category: '' }, LENIENT),
      post({ category: [] }),
    ]) {
      expect(example.selections(['category'], request, ANONYMOUS)).toEqual({
        category: { widget: 'multi_select', selected: [] },
      });
    }
  });
});

describe('x_verify_params', () => {
  it('ignores names the endpoint does not take, unless asked to verify them', () => {
    const request = get({ start_date: '2024-02-01', limit_rows: '5' });
    expect(example.selections(['end_date'], request, ANONYMOUS)).toEqual({
      end_date: { widget: 'date', date: '2024-12-31' },
    });
    const verified = get({ end_date: '2024-02-01', limit_rows: '5', x_verify_params: 'true' });
    expect(() => example.widgets(['end_date'], verified, ANONYMOUS)).toThrow(
      expect.objectContaining({
        code: 'unknown_parameter',
        message: 'Unknown parameter "limit_rows" for this endpoint; it takes end_date',
      }),
    );
    expect(() => example.selections(['end_date'], verified, ANONYMOUS)).toThrow(
      expect.objectContaining({ code: 'unknown_parameter' }),
    );
  });

  it('names the parameter a mistyped name is likely meant to be', () => {
    const verified = get({ strat_date: '2024-02-01', x_verify_params: 'true' });
    expect(() => example.widgets(['start_date', 'end_date'], verified, ANONYMOUS)).toThrow(
      expect.objectContaining({
        code: 'unknown_parameter',
        message:
          'Unknown parameter "strat_date" for this endpoint (did you mean "start_date"?); it takes start_date, end_date',
      }),
    );
  });

  it('refuses an x_parent_param of another endpoint, verifying or not', () => {
    const request = get({ x_parent_param: 'category', x_verify_params: '1' });
    expect(() => example.widgets(['end_date'], request, ANONYMOUS)).toThrow(
      'x_parent_param "category" is not a parameter of this endpoint; it takes end_date',
    );
  });

  it('ignores a value for a disabled parameter, or refuses it when verifying', () => {
    const request = get({ group_by: 'day', limit: '15' });
    expect(example.selections(GROUPED, request, MANAGER)).toMatchObject({
      limit: { widget: 'disabled' },
    });
    // The ignored value does not count as a selection: group_by alone is the trigger.
    expect(names(example.widgets(GROUPED, request, MANAGER))).toEqual(['group_by', 'limit']);
    const verified = get({ group_by: 'day', limit: '10', x_verify_params: 'true' });
    expect(() => example.widgets(GROUPED, verified, MANAGER)).toThrow(
      expect.objectContaining({
        code: 'unknown_parameter',
        message: 'Parameter "limit" is disabled for the current selections and takes no value',
      }),
    );
  });
});

describe('refresh', () => {
  it('answers every parameter when nothing is selected', () => {
    expect(names(example.widgets(GROUPED, emptyParameterRequest(), MANAGER))).toEqual(GROUPED);
  });

  it('answers the trigger and its descendants for one selection, in the endpoint order', () => {
    expect(names(example.widgets(GROUPED, get({ category: ['1', '2'] }), ANONYMOUS))).toEqual([
      'category',
      'subcategory',
    ]);
    const reordered = ['subcategory', 'description_filter', 'category'];
    expect(names(example.widgets(reordered, get({ category: '1' }), ANONYMOUS))).toEqual([
      'subcategory',
      'category',
    ]);
    // A parameter without children is its own refresh.
    expect(names(example.widgets(GROUPED, get({ description_filter: 'x' }), ANONYMOUS))).toEqual([
      'description_filter',
    ]);
  });

  it('applies every selection and answers the trigger family with x_parent_param', () => {
    const request = get({
      category: '0',
      subcategory: '1',
      group_by: 'cat',
      x_parent_param: 'category',
    });
    const widgets = example.widgets(GROUPED, request, MANAGER);
    expect(widgets).toEqual([
      expect.objectContaining({ name: 'category', selected_ids: ['0'] }),
      expect.objectContaining({ name: 'subcategory', selected_ids: ['1'] }),
    ]);
  });

  it('answers all parameters evaluated with several selections and no x_parent_param', () => {
    const request = post({ group_by: 'day', category: ['0'] });
    const widgets = example.widgets(GROUPED, request, MANAGER);
    expect(names(widgets)).toEqual(GROUPED);
    expect(widgets[1]).toMatchObject({ widget_type: 'disabled' });
    expect(widgets[4]).toMatchObject({ options: [{ id: '0' }, { id: '1' }] });
  });

  it('refuses an x_parent_param that the endpoint does not take (the document lists its own names)', () => {
    const request = get({ category: '0', x_parent_param: 'start_date' });
    expect(() => example.widgets(GROUPED, request, MANAGER)).toThrow(
      expect.objectContaining({
        code: 'invalid_request',
        message: expect.stringContaining('x_parent_param "start_date" is not a parameter'),
      }),
    );
  });

  it('lists every parameter for P/parameters, in the project order', () => {
    expect(names(example.widgets(ALL, emptyParameterRequest(), EMPLOYEE))).toEqual(ALL);
  });
});

describe('cascading', () => {
  const CHAIN = `
parameters:
  - name: region
    widget: single_select
    label: Region
    user_group_field: role
    default: south
    options:
      - { id: north, label: North }
      - { id: south, label: South, user_groups: [manager] }
  - name: country
    widget: multi_select
    label: Country
    parent: region
    order_matters: true
    show_select_all: false
    options:
      - { id: no, label: Norway, parent_option_ids: [north] }
      - { id: se, label: Sweden, parent_option_ids: [north] }
      - { id: es, label: Spain, parent_option_ids: [south] }
  - name: city
    widget: single_select
    label: City
    parent: country
    options:
      - { id: osl, label: Oslo, parent_option_ids: [no] }
      - { id: sto, label: Stockholm, parent_option_ids: [se] }
      - { id: mad, label: Madrid, parent_option_ids: [es], airport: MAD }
  - name: radius
    widget: number
    label: Radius
    parent: city
    variants:
      - { parent_option_ids: [osl, sto], min: 0, max: 1, increment: 0.1, default: 0.3 }
      - { parent_option_ids: [mad], min: 0, max: 50 }
  - name: note
    widget: text
    label: Note
    input_type: month`;
  const chain = catalogOf(CHAIN);
  const all = chain.names();

  it('follows the default through the chain: a hidden default falls back to the first visible option', () => {
    expect(chain.widgets(all, emptyParameterRequest(), MANAGER)).toEqual([
      expect.objectContaining({ name: 'region', selected_id: 'south', trigger_refresh: true }),
      {
        widget_type: 'multi_select',
        name: 'country',
        label: 'Country',
        description: '',
        options: [{ id: 'es', label: 'Spain' }],
        trigger_refresh: true,
        show_select_all: false,
        order_matters: true,
        selected_ids: [],
      },
      expect.objectContaining({ name: 'city', selected_id: 'mad', trigger_refresh: true }),
      expect.objectContaining({ name: 'radius', min_value: 0, max_value: 50, increment: 1 }),
      expect.objectContaining({ name: 'note', input_type: 'month', entered_text: '' }),
    ]);
    expect(chain.widgets(['region', 'city'], emptyParameterRequest(), EMPLOYEE)).toEqual([
      expect.objectContaining({ selected_id: 'north' }),
      expect.objectContaining({
        options: [
          { id: 'osl', label: 'Oslo' },
          { id: 'sto', label: 'Stockholm' },
        ],
      }),
    ]);
  });

  it('refreshes all descendants of a trigger, grandchildren included', () => {
    const widgets = chain.widgets(all, get({ region: 'north' }), MANAGER);
    expect(names(widgets)).toEqual(['region', 'country', 'city', 'radius']);
    expect(widgets[3]).toEqual({
      widget_type: 'number',
      name: 'radius',
      label: 'Radius',
      description: '',
      min_value: 0,
      max_value: 1,
      increment: 0.1,
      selected_value: 0.3,
    });
  });

  it('computes increments exactly: 0.3 is on a 0.1 grid, 0.35 is not', () => {
    const at = (value: string) =>
      get({ region: 'north', country: 'no', radius: value, x_parent_param: 'region' });
    expect(chain.selections(all, at('0.3'), MANAGER).radius).toEqual({
      widget: 'number',
      value: '0.3',
    });
    expect(() => chain.selections(all, at('0.35'), MANAGER)).toThrow(
      'Parameter "radius": 0.35 is not a multiple of the increment 0.1 from 0',
    );
  });

  it('keeps the order of a multi-select whose order matters, and drops repeated ids', () => {
    const request = post({ region: 'north', country: ['se', 'no', 'se'] });
    const { country } = chain.selections(all, request, MANAGER);
    expect(country.widget === 'multi_select' && country.selected.map((o) => o.id)).toEqual([
      'se',
      'no',
    ]);
  });

  it('gives the option custom fields to the SQL engine', () => {
    expect(chain.selections(['city'], emptyParameterRequest(), MANAGER).city).toEqual({
      widget: 'single_select',
      selected: { id: 'mad', label: 'Madrid', fields: { airport: 'MAD' } },
    });
  });

  it('treats an empty multi-select parent as all; a child with no option for the caller selects none', () => {
    const request = post({ region: 'north', country: [] });
    // An empty country counts as all of its options, so city offers Oslo and Stockholm.
    expect(chain.widgets(['city'], request, EMPLOYEE)).toEqual([
      expect.objectContaining({
        options: [
          { id: 'osl', label: 'Oslo' },
          { id: 'sto', label: 'Stockholm' },
        ],
        selected_id: 'osl',
      }),
    ]);
    const empty = catalogOf(`
parameters:
  - { name: a, widget: single_select, label: A, options: [{ id: x, label: X }] }
  - name: b
    widget: single_select
    label: B
    parent: a
    user_group_field: role
    options: [{ id: y, label: Y, parent_option_ids: [x], user_groups: [manager] }]`);
    expect(empty.widgets(['b'], emptyParameterRequest(), ANONYMOUS)).toEqual([
      expect.objectContaining({ options: [], selected_id: null }),
    ]);
    expect(empty.selections(['b'], emptyParameterRequest(), ANONYMOUS)).toEqual({
      b: { widget: 'single_select', selected: null },
    });
  });

  it('checks entered text against the input type', () => {
    expect(chain.selections(['note'], get({ note: '2024-05' }), ANONYMOUS)).toEqual({
      note: { widget: 'text', text: '2024-05' },
    });
    expect(() => chain.selections(['note'], get({ note: 'May' }), ANONYMOUS)).toThrow(
      'Parameter "note": "May" is not a month YYYY-MM',
    );
  });
});

describe('the catalog', () => {
  it('refuses to evaluate a name that the project does not define', () => {
    expect(() => example.widgets(['nope'], emptyParameterRequest(), ANONYMOUS)).toThrow(
      'Parameter "nope" is not defined in the project',
    );
  });
});
