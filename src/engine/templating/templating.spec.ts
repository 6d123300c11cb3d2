import { Binder } from '@/engine/templating/binder';
import { renderTemplate } from '@/engine/templating/sql-renderer';
import { templateContext } from '@/engine/templating/template-context';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import type { UserField } from '@/core/user-fields';

const ROLE: UserField = { name: 'role', type: 'string', required: false, description: '' };

const SELECTIONS: SelectionValues = {
  group_by: {
    widget: 'single_select',
    selected: {
      id: 'cat',
      label: 'Category',
      fields: { columns: 'category', order_by: 'category DESC' },
    },
  },
  category: {
    widget: 'multi_select',
    selected: [
      { id: '0', label: 'Food', fields: {} },
      { id: '3', label: 'Transportation', fields: {} },
    ],
  },
  subcategory: { widget: 'multi_select', selected: [] },
  start_date: { widget: 'date', date: '2024-01-01' },
  date_range: { widget: 'date_range', start: '2024-02-01', end: '2024-02-29' },
  max_filter: { widget: 'number', value: '300' },
  between_filter: { widget: 'number_range', lower: '0.5', upper: '10' },
  description_filter: { widget: 'text', text: "'; DROP TABLE x; --" },
  limit: { widget: 'disabled' },
};

const CALLER: CallerView = { username: 'alice', isAdmin: false, fields: { role: 'manager' } };

/** `null` renders as SQL computed once for everyone: no selections, no user. */
function render(sql: string, given: SelectionValues | null = SELECTIONS) {
  const selections = given ?? undefined;
  const binder = new Binder();
  const context = templateContext({
    binder,
    ref: (name) => {
      if (name !== 'expenses') throw new Error(`no model named "${name}"`);
      return `"${name}"`;
    },
    selections,
    caller: selections ? CALLER : undefined,
    userFields: [ROLE],
    what: 'model "m"',
  });
  return binder.finish(renderTemplate('models/m.sql', sql, context));
}

describe('SQL templates', () => {
  it('binds a malicious text as a value, never as SQL text', () => {
    const result = render(
      'SELECT * FROM {{ ref("expenses") }} WHERE contains(description, {{ params.description_filter }})',
    );
    expect(result.sql).toBe('SELECT * FROM "expenses" WHERE contains(description, $1)');
    expect(result.binds).toEqual([{ type: 'text', value: "'; DROP TABLE x; --" }]);
  });

  it('renders option custom fields as SQL and selected ids as placeholders', () => {
    const result = render(
      'SELECT {{ params.group_by.selected.fields.columns }} FROM t ' +
        'WHERE category_id IN ({{ params.category }}) AND g = {{ params.group_by }} ' +
        'ORDER BY {{ params.group_by.selected.fields.order_by }}',
    );
    expect(result.sql).toBe(
      'SELECT category FROM t WHERE category_id IN ($1, $2) AND g = $3 ORDER BY category DESC',
    );
    expect(result.binds.map((bind) => bind.value)).toEqual(['0', '3', 'cat']);
  });

  it('binds dates, decimals and range ends with their types', () => {
    const result = render(
      'WHERE d >= {{ params.start_date }} AND d BETWEEN {{ params.date_range.start }} AND ' +
        '{{ params.date_range.end }} AND a <= {{ params.max_filter }} AND a BETWEEN ' +
        '{{ params.between_filter.lower }} AND {{ params.between_filter.upper }}',
    );
    expect(result.sql).toBe(
      'WHERE d >= $1 AND d BETWEEN $2 AND $3 AND a <= $4 AND a BETWEEN $5 AND $6',
    );
    expect(result.binds).toEqual([
      { type: 'date', value: '2024-01-01' },
      { type: 'date', value: '2024-02-01' },
      { type: 'date', value: '2024-02-29' },
      { type: 'decimal', value: '300' },
      { type: 'decimal', value: '0.5' },
      { type: 'decimal', value: '10' },
    ]);
  });

  it('offers tests that never expose values: length, is(), in, enabled', () => {
    const result = render(
      '{% if params.category.selected | length %}c{% endif %}{% if params.subcategory.selected | length %}s{% endif %}' +
        "{% if params.group_by.is('cat') %}G{% endif %}{% if '3' in params.category.ids %}3{% endif %}" +
        "{% if '4' in params.category.ids %}4{% endif %}{% if params.limit.enabled %}L{% endif %}" +
        '{% if params.description_filter.is_empty %}E{% endif %}',
    );
    expect(result).toMatchObject({ sql: 'cG3', binds: [] });
  });

  it('numbers a value output twice once, and does not bind values only tested', () => {
    const result = render(
      "{% if params.group_by.is('x') %}{% endif %}{{ params.start_date }} = {{ params.start_date }}",
    );
    expect(result).toMatchObject({
      sql: '$1 = $1',
      binds: [{ type: 'date', value: '2024-01-01' }],
    });
  });

  it('binds the user name and string fields, keeps is_admin a boolean', () => {
    const result = render(
      'owner = {{ user.username }} AND role = {{ user.role }}{% if not user.is_admin %} AND x{% endif %}',
    );
    expect(result.sql).toBe('owner = $1 AND role = $2 AND x');
    expect(result.binds.map((bind) => bind.value)).toEqual(['alice', 'manager']);
  });

  it.each([
    ["{% if params.group_by == 'cat' %}{% endif %}", /cannot be compared/],
    ["{{ '%' ~ params.description_filter ~ '%' }}", /cannot be compared or joined/],
    ["WHERE d LIKE '%{{ params.description_filter }}%'", /inside a quoted string/],
    ['{{ params.nope }}', /no selection for parameter "nope"/],
    ['{{ params.group_by.selected.fields.colums }}', /has no custom field "colums"/],
    ['{{ user.department }}', /no user field named "department"/],
    ['LIMIT {{ params.limit }}', /"limit" is disabled.*params\.limit\.enabled/],
    ['{{ params.date_range }}', /is a range: output params\.date_range\.start and \.end/],
    ['{{ typo }}', /undefined/],
    ["{{ ref('other') }}", /no model named "other"/],
  ])('refuses %s', (sql, message) => {
    expect(() => render(sql)).toThrow(message);
  });

  it('reports the file and line of a render error', () => {
    expect(() => render('SELECT 1\nFROM t\nWHERE {{ params.nope }}')).toThrow(
      /^models\/m\.sql line 3: .*no selection for parameter "nope"/,
    );
  });

  it('refuses params and user in SQL computed once for everyone', () => {
    expect(() => render('{{ params.start_date }}', null)).toThrow(/computed once for everyone/);
    expect(() => render('{% if user.is_admin %}{% endif %}', null)).toThrow(/computed once/);
  });

  it('leaves a value rendered in a comment unbound', () => {
    const result = render('SELECT 1 -- {{ params.start_date }}\n/* {{ params.max_filter }} */');
    expect(result).toMatchObject({
      sql: 'SELECT 1 -- (bound value)\n/* (bound value) */',
      binds: [],
    });
  });
});
