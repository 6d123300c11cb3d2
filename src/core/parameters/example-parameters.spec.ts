import {
  ANONYMOUS,
  EMPLOYEE,
  EXAMPLE_PARAMETER_NAMES,
  MANAGER,
  exampleCatalog,
} from '@/core/parameters/__fixtures__/example-parameters';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import {
  emptyParameterRequest,
  parseBodySelections,
  parseQuerySelections,
} from '@/core/parameters/selection-request';
import type { WidgetJson } from '@/core/parameters/widget-json';

/** The checks of the parameters issue, on the example project's parameters. */

const GROUPED = [
  'group_by',
  'limit',
  'date_range',
  'category',
  'subcategory',
  'between_filter',
  'description_filter',
];
const ALL = EXAMPLE_PARAMETER_NAMES;

let catalog: ParameterCatalog;
beforeAll(() => {
  catalog = exampleCatalog();
});

const byName = (widgets: WidgetJson[], name: string) => {
  const widget = widgets.find((w) => w.name === name);
  if (!widget) throw new Error(`no widget ${name}`);
  return widget;
};
const optionIds = (widget: WidgetJson) =>
  'options' in widget ? widget.options.map((option) => option.id) : [];

describe('the example project', () => {
  it('lists the parameters in the project order', () => {
    expect(catalog.names()).toEqual(ALL);
    expect(catalog.has('limit')).toBe(true);
    expect(catalog.has('x_limit')).toBe(false);
  });

  it('shows every widget with exactly the fields of section 2.7', () => {
    const widgets = catalog.widgets(ALL, emptyParameterRequest(), MANAGER);
    expect(widgets).toEqual([
      {
        widget_type: 'single_select',
        name: 'group_by',
        label: 'Group By',
        description: 'Dimension(s) to aggregate by',
        options: [
          { id: 'trans', label: 'Transaction' },
          { id: 'day', label: 'Day' },
          { id: 'month', label: 'Month' },
          { id: 'cat', label: 'Category' },
          { id: 'subcat', label: 'Subcategory' },
        ],
        trigger_refresh: true,
        selected_id: 'trans',
      },
      {
        widget_type: 'number',
        name: 'limit',
        label: 'Max Number of Rows',
        description: 'Maximum number of rows to return',
        min_value: 0,
        max_value: 1000,
        increment: 10,
        selected_value: 1000,
      },
      {
        widget_type: 'date',
        name: 'start_date',
        label: 'Start Date',
        description: '',
        min_date: '2024-01-01',
        max_date: '2024-12-31',
        selected_date: '2024-01-01',
      },
      {
        widget_type: 'date',
        name: 'end_date',
        label: 'End Date',
        description: '',
        min_date: '2024-01-01',
        max_date: '2024-12-31',
        selected_date: '2024-12-31',
      },
      {
        widget_type: 'date_range',
        name: 'date_range',
        label: 'Date Range',
        description: '',
        min_date: '2024-01-01',
        max_date: '2024-12-31',
        selected_start_date: '2024-01-01',
        selected_end_date: '2024-12-31',
      },
      {
        widget_type: 'multi_select',
        name: 'category',
        label: 'Category Filter',
        description: '',
        options: [
          { id: '0', label: 'Food' },
          { id: '1', label: 'Bills' },
          { id: '2', label: 'Shopping' },
          { id: '3', label: 'Transportation' },
          { id: '4', label: 'Entertainment' },
        ],
        trigger_refresh: true,
        show_select_all: true,
        order_matters: false,
        selected_ids: [],
      },
      expect.objectContaining({
        widget_type: 'multi_select',
        name: 'subcategory',
        selected_ids: [],
      }),
      expect.objectContaining({ widget_type: 'number', name: 'min_filter', selected_value: 0 }),
      expect.objectContaining({ widget_type: 'number', name: 'max_filter', selected_value: 300 }),
      {
        widget_type: 'number_range',
        name: 'between_filter',
        label: 'Amounts Between',
        description: '',
        min_value: 0,
        max_value: 300,
        increment: 1,
        selected_lower_value: 0,
        selected_upper_value: 300,
      },
      {
        widget_type: 'text',
        name: 'description_filter',
        label: 'Description Contains',
        description: '',
        entered_text: '',
        input_type: 'text',
      },
    ]);
    expect(Object.keys(widgets[0])).toEqual([
      'widget_type',
      'name',
      'label',
      'description',
      'options',
      'trigger_refresh',
      'selected_id',
    ]);
  });

  it('gives trigger_refresh exactly to the parents', () => {
    const widgets = catalog.widgets(ALL, emptyParameterRequest(), MANAGER);
    const refreshing = widgets.filter((w) => 'trigger_refresh' in w && w.trigger_refresh);
    expect(refreshing.map((w) => w.name)).toEqual(['group_by', 'category']);
    expect(byName(widgets, 'subcategory')).toMatchObject({ trigger_refresh: false });
  });

  it('shows a manager five group_by options, an employee and an anonymous caller four', () => {
    const groupBy = (caller: typeof MANAGER) =>
      byName(catalog.widgets(['group_by'], emptyParameterRequest(), caller), 'group_by');
    expect(optionIds(groupBy(MANAGER))).toEqual(['trans', 'day', 'month', 'cat', 'subcat']);
    expect(optionIds(groupBy(EMPLOYEE))).toEqual(['day', 'month', 'cat', 'subcat']);
    expect(optionIds(groupBy(ANONYMOUS))).toEqual(['day', 'month', 'cat', 'subcat']);
    // The default is the first option the caller may see.
    expect(groupBy(MANAGER)).toMatchObject({ selected_id: 'trans' });
    expect(groupBy(EMPLOYEE)).toMatchObject({ selected_id: 'day' });
  });

  it('refuses the manager-only option to an employee as not theirs, and lists only what they may choose', () => {
    const request = parseQuerySelections({ group_by: 'trans' });
    expect(() => catalog.widgets(GROUPED, request, EMPLOYEE)).toThrow(
      'Parameter "group_by": option "trans" is not available to you; ' +
        'the options are "day", "month", "cat", "subcat"',
    );
    expect(() => catalog.widgets(GROUPED, request, ANONYMOUS)).toThrow(
      'Parameter "group_by": option "trans" is not available without signing in; ' +
        'the options are "day", "month", "cat", "subcat"',
    );
  });

  it('lists the options a caller may choose after an unknown id, never a restricted one', () => {
    const request = parseQuerySelections({ group_by: 'weekday' });
    expect(() => catalog.widgets(GROUPED, request, EMPLOYEE)).toThrow(
      'Parameter "group_by": option "weekday" does not exist; the options are "day", "month", "cat", "subcat"',
    );
    expect(() => catalog.widgets(GROUPED, request, MANAGER)).toThrow(
      'the options are "trans", "day", "month", "cat", "subcat"',
    );
  });

  it('echoes at most the start of a long unknown id', () => {
    const request = parseQuerySelections({ group_by: 'x'.repeat(5000) });
    let message = '';
    try {
      catalog.widgets(GROUPED, request, EMPLOYEE);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`option "${'x'.repeat(100)}"... (5000 characters) does not exist`);
    expect(message.length).toBeLessThan(300);
  });

  it('enables limit only when group_by is trans', () => {
    const limit = (caller: typeof MANAGER, groupBy?: string) => {
      const query = groupBy === undefined ? {} : { group_by: groupBy };
      const widgets = catalog.widgets(GROUPED, parseQuerySelections(query), caller);
      return byName(widgets, 'limit').widget_type;
    };
    expect(limit(MANAGER)).toBe('number');
    expect(limit(MANAGER, 'trans')).toBe('number');
    for (const groupBy of ['day', 'month', 'cat', 'subcat']) {
      expect(limit(MANAGER, groupBy)).toBe('disabled');
    }
    expect(limit(EMPLOYEE)).toBe('disabled');
  });

  it('answers a refresh of group_by with group_by and limit only, limit switching to disabled', () => {
    const widgets = catalog.widgets(GROUPED, parseQuerySelections({ group_by: 'cat' }), MANAGER);
    expect(widgets).toEqual([
      expect.objectContaining({ name: 'group_by', selected_id: 'cat' }),
      {
        widget_type: 'disabled',
        name: 'limit',
        label: 'Max Number of Rows',
        description: 'Maximum number of rows to return',
      },
    ]);
  });

  it('narrows subcategory to Dining Out and Groceries when category is 0', () => {
    const widgets = catalog.widgets(GROUPED, parseQuerySelections({ category: '0' }), EMPLOYEE);
    expect(widgets.map((w) => w.name)).toEqual(['category', 'subcategory']);
    expect(byName(widgets, 'category')).toMatchObject({ selected_ids: ['0'] });
    expect(byName(widgets, 'subcategory')).toMatchObject({
      options: [
        { id: '0', label: 'Dining Out' },
        { id: '1', label: 'Groceries' },
      ],
      selected_ids: [],
    });
  });

  it('shows all 14 subcategories for an empty category, and the union for several', () => {
    const all = catalog.widgets(['subcategory'], emptyParameterRequest(), ANONYMOUS);
    expect(optionIds(all[0])).toHaveLength(14);
    const two = catalog.widgets(GROUPED, parseQuerySelections({ category: ['0', '4'] }), ANONYMOUS);
    expect(optionIds(byName(two, 'subcategory'))).toEqual(['0', '1', '8', '9', '13']);
  });

  it('refuses a subcategory that the selected category excludes', () => {
    const request = parseQuerySelections({ category: '0', subcategory: '2' });
    expect(() => catalog.widgets(GROUPED, request, EMPLOYEE)).toThrow(
      'Parameter "subcategory": option "2" is not available for the current selection of "category"',
    );
    expect(() => catalog.selections(GROUPED, request, EMPLOYEE)).toThrow(
      expect.objectContaining({ code: 'invalid_parameter_selection' }),
    );
  });

  it('answers GET and POST forms the same', () => {
    const pairs: [Record<string, string | string[]>, Record<string, unknown>][] = [
      [{ category: ['0', '2'] }, { category: ['0', '2'] }],
      [
        { group_by: 'trans', limit: '20' },
        { group_by: 'trans', limit: 20 },
      ],
      [
        { group_by: 'trans', limit: '20' },
        { group_by: 'trans', limit: '20' },
      ],
      [{ date_range: ['2024-02-01', '2024-03-31'] }, { date_range: ['2024-02-01', '2024-03-31'] }],
      [{ between_filter: ['10', '20.0'] }, { between_filter: [10, '20'] }],
      [{ description_filter: 'Vendor, A' }, { description_filter: 'Vendor, A' }],
      [
        { group_by: 'subcat', category: '1', subcategory: ['2', '7'] },
        { group_by: 'subcat', category: ['1'], subcategory: ['2', '7'] },
      ],
    ];
    for (const [query, body] of pairs) {
      const get = parseQuerySelections(query);
      const post = parseBodySelections(body);
      expect(catalog.widgets(GROUPED, post, MANAGER)).toEqual(
        catalog.widgets(GROUPED, get, MANAGER),
      );
      expect(catalog.selections(GROUPED, post, MANAGER)).toEqual(
        catalog.selections(GROUPED, get, MANAGER),
      );
    }
  });

  it('gives the SQL engine exact values, option fields and defaults', () => {
    const request = parseBodySelections({ group_by: 'cat', between_filter: ['0.0', 12] });
    expect(catalog.selections(GROUPED, request, MANAGER)).toEqual({
      group_by: {
        widget: 'single_select',
        selected: {
          id: 'cat',
          label: 'Category',
          fields: { columns: 'category', order_by: 'category DESC' },
        },
      },
      limit: { widget: 'disabled' },
      date_range: { widget: 'date_range', start: '2024-01-01', end: '2024-12-31' },
      category: { widget: 'multi_select', selected: [] },
      subcategory: { widget: 'multi_select', selected: [] },
      between_filter: { widget: 'number_range', lower: '0', upper: '12' },
      description_filter: { widget: 'text', text: '' },
    });
  });

  it('says to repeat the name when several option ids come joined by a comma', () => {
    expect(() =>
      catalog.widgets(GROUPED, parseQuerySelections({ category: '0,1' }), ANONYMOUS),
    ).toThrow(
      /option "0,1" does not exist; .*; to choose several, repeat the name: \?category=0&category=1$/,
    );
    expect(() =>
      catalog.widgets(GROUPED, parseBodySelections({ category: ['0,1'] }), ANONYMOUS),
    ).toThrow(/; to choose several, send a JSON list: \["0","1"\]$/);
    // Not when the parts are not options: the hint would send the caller to another refusal.
    expect(() =>
      catalog.widgets(GROUPED, parseQuerySelections({ category: '0,99' }), ANONYMOUS),
    ).toThrow(/does not exist; the options are [^;]*$/);
  });

  it('refuses a lenient form in the strict forms with a useful message', () => {
    const request = parseQuerySelections({ category: '0,1' });
    expect(() => catalog.widgets(GROUPED, request, ANONYMOUS)).toThrow(
      'Parameter "category": option "0,1" does not exist',
    );
  });
});
