import { EXAMPLE_PARAMETER_NAMES } from '@/core/parameters/__fixtures__/example-parameters';
import { Api, L, P } from './support/api';
import { TestServer, startServer } from './support/server';

const WIDGET_FIELDS: Record<string, string[]> = {
  single_select: [
    'description',
    'label',
    'name',
    'options',
    'selected_id',
    'trigger_refresh',
    'widget_type',
  ],
  multi_select: [
    'description',
    'label',
    'name',
    'options',
    'order_matters',
    'selected_ids',
    'show_select_all',
    'trigger_refresh',
    'widget_type',
  ],
  date: ['description', 'label', 'max_date', 'min_date', 'name', 'selected_date', 'widget_type'],
  date_range: [
    'description',
    'label',
    'max_date',
    'min_date',
    'name',
    'selected_end_date',
    'selected_start_date',
    'widget_type',
  ],
  number: [
    'description',
    'increment',
    'label',
    'max_value',
    'min_value',
    'name',
    'selected_value',
    'widget_type',
  ],
  number_range: [
    'description',
    'increment',
    'label',
    'max_value',
    'min_value',
    'name',
    'selected_lower_value',
    'selected_upper_value',
    'widget_type',
  ],
  text: ['description', 'entered_text', 'input_type', 'label', 'name', 'widget_type'],
  disabled: ['description', 'label', 'name', 'widget_type'],
};

describe('parameters over HTTP', () => {
  let t: TestServer;
  let api: Api;
  let manager: string;
  let employee: string;
  const grouped = `${P}/datasets/expenses_grouped/parameters`;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    const admin = await api.adminToken();
    manager = await api.userToken(admin, 'manny', { role: 'manager' });
    employee = await api.userToken(admin, 'emily', { role: 'employee' });
  });
  afterAll(async () => {
    await t.close();
  });

  const widget = (body: { parameters: { name: string }[] }, name: string) =>
    body.parameters.find((p) => p.name === name) as Record<string, any>;

  it('shows a manager five group_by options and an employee four', async () => {
    const asManager = await api.get(grouped, manager);
    expect(widget(asManager.body, 'group_by').options.map((o: { id: string }) => o.id)).toEqual([
      'trans',
      'day',
      'month',
      'cat',
      'subcat',
    ]);
    expect(widget(asManager.body, 'group_by').selected_id).toBe('trans');
    const asEmployee = await api.get(grouped, employee);
    expect(widget(asEmployee.body, 'group_by').options.map((o: { id: string }) => o.id)).toEqual([
      'day',
      'month',
      'cat',
      'subcat',
    ]);
    expect(widget(asEmployee.body, 'group_by').selected_id).toBe('day');
  });

  it('lists the parameters in declared order with exactly the fields of their widget type', async () => {
    const reply = await api.get(grouped, manager);
    expect(reply.body.parameters.map((p: { name: string }) => p.name)).toEqual([
      'group_by',
      'limit',
      'date_range',
      'category',
      'subcategory',
      'between_filter',
      'description_filter',
    ]);
    const all = await api.get(`${P}/parameters`, manager);
    // Exactly the example's parameters that ../shared/spec/project-format.md names, in declared order.
    expect(all.body.parameters.map((p: { name: string }) => p.name)).toEqual(
      EXAMPLE_PARAMETER_NAMES,
    );
    for (const parameter of all.body.parameters) {
      expect(Object.keys(parameter).sort()).toEqual(WIDGET_FIELDS[parameter.widget_type]);
    }
    expect(widget(all.body, 'between_filter')).toMatchObject({
      min_value: 0,
      max_value: 300,
      increment: 1,
      selected_lower_value: 0,
      selected_upper_value: 300,
    });
    expect(widget(all.body, 'start_date')).toMatchObject({
      min_date: '2024-01-01',
      max_date: '2024-12-31',
      selected_date: '2024-01-01',
    });
    expect(widget(all.body, 'description_filter')).toMatchObject({
      entered_text: '',
      input_type: 'text',
    });
  });

  it('enables limit only when group_by is trans, and returns the trigger and its children only', async () => {
    const trans = await api.get(`${grouped}?group_by=trans`, manager);
    expect(trans.body.parameters.map((p: { name: string }) => p.name)).toEqual([
      'group_by',
      'limit',
    ]);
    expect(widget(trans.body, 'limit')).toMatchObject({
      widget_type: 'number',
      min_value: 0,
      max_value: 1000,
      increment: 10,
      selected_value: 1000,
    });
    const day = await api.get(`${grouped}?group_by=day`, manager);
    expect(widget(day.body, 'limit').widget_type).toBe('disabled');
    expect(widget(day.body, 'group_by')).toMatchObject({
      selected_id: 'day',
      trigger_refresh: true,
    });
  });

  it('narrows subcategory to Dining Out and Groceries for category 0, and shows all 14 for none', async () => {
    const reply = await api.get(`${grouped}?category=0`, manager);
    expect(
      widget(reply.body, 'subcategory').options.map((o: { label: string }) => o.label),
    ).toEqual(['Dining Out', 'Groceries']);
    const none = await api.get(grouped, manager);
    expect(widget(none.body, 'subcategory').options).toHaveLength(14);
    expect(widget(none.body, 'category').trigger_refresh).toBe(true);
    expect(widget(none.body, 'subcategory').trigger_refresh).toBe(false);
  });

  it('answers GET and POST the same', async () => {
    const get = await api.get(`${grouped}?category=0&category=2&x_parent_param=category`, manager);
    const post = await api.request('POST', grouped, {
      token: manager,
      json: { category: ['0', '2'], x_parent_param: 'category' },
    });
    expect(post.status).toBe(200);
    expect(post.body).toEqual(get.body);
  });

  it.each([
    ['group_by=nope', 'group_by'],
    ['category=9', 'category'],
    ['category=0&subcategory=5&x_parent_param=category', 'subcategory'],
    ['between_filter=5', 'between_filter'],
  ])(
    'answers %s with 400 invalid_parameter_selection naming the parameter',
    async (query, name) => {
      const reply = await api.get(`${grouped}?${query}`, manager);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('invalid_parameter_selection');
      expect(reply.body.message).toContain(name);
    },
  );

  it('refuses an unknown name with x_verify_params=true, and ignores it otherwise', async () => {
    const strict = await api.get(`${grouped}?nope=1&x_verify_params=true`, manager);
    expect(strict.status).toBe(400);
    expect(strict.body.error).toBe('unknown_parameter');
    expect((await api.get(`${grouped}?nope=1`, manager)).status).toBe(200);
  });

  it('applies scopes: public for anyone, protected needs a token, unknown names are 404', async () => {
    expect((await api.get(`${P}/datasets/expenses_by_month/parameters`)).status).toBe(200);
    expect((await api.get(grouped)).status).toBe(401);
    expect((await api.get(`${P}/datasets/expense_transactions/parameters`, employee)).status).toBe(
      403,
    );
    expect((await api.get(`${P}/datasets/nope/parameters`, employee)).body.error).toBe('not_found');
    expect((await api.get(`${P}/dashboards/expenses_report/parameters`)).status).toBe(200);
    expect((await api.get(`${P}/dashboards/expenses_dashboard/parameters`)).status).toBe(401);
    expect((await api.get(`${P}/parameters`)).status).toBe(401);
  });

  it('serves the legacy forms: hyphens, comma lists, one selection at most, no description', async () => {
    const reply = await api.get(`${L}/dataset/expenses-grouped/parameters?category=0,1`, manager);
    expect(reply.status).toBe(200);
    expect(
      widget(reply.body, 'subcategory').options.map((o: { label: string }) => o.label),
    ).toEqual(['Dining Out', 'Groceries', 'Utilities', 'Mobile', 'Internet']);
    expect(reply.body.parameters.every((p: object) => !('description' in p))).toBe(true);
    const two = await api.get(
      `${L}/dataset/expenses_grouped/parameters?category=0&group-by=day`,
      manager,
    );
    expect(two.status).toBe(400);
    expect(two.body).toEqual({ detail: expect.any(String), message: two.body.detail });
    expect(two.body.detail).toMatch(/selection/i);
    const post = await api.request('POST', `${L}/dataset/expenses_grouped/parameters`, {
      token: manager,
      json: { category: '["0"]' },
    });
    expect(widget(post.body, 'subcategory').options).toHaveLength(2);
  });
});
