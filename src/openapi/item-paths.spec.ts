import { join } from 'node:path';
import type { ParameterObject, SchemaObject } from '@nestjs/swagger';
import { projectItemDocs } from '@/openapi/item-paths';
import type { Project } from '@/core/project/project';
import { loadProject } from '@/core/project/project-loader';

const PREFIX = 'api/service-v0/project/expenses/v1';
const MAX_ROWS = 100_000;

function example(): Project {
  return loadProject(join(__dirname, '..', '..', 'examples', 'expenses'));
}

function queryOf(project: Project, path: string): Record<string, ParameterObject> {
  const operation = projectItemDocs(project, PREFIX, MAX_ROWS).paths[`/${PREFIX}${path}`].get;
  const parameters = (operation?.parameters ?? []) as ParameterObject[];
  return Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter]));
}

describe('per-dataset OpenAPI paths and schemas', () => {
  it("types a dataset's records by its model's columns, and only those", () => {
    const { schemas } = projectItemDocs(example(), PREFIX, MAX_ROWS);
    const record = schemas['datasets.expenses_by_month.Record'];
    expect(record.additionalProperties).toBe(false);
    expect(record.properties).toEqual({
      month: { type: 'string', nullable: true },
      total_amount: {
        anyOf: [{ type: 'number' }, expect.objectContaining({ type: 'string' })],
        nullable: true,
      },
    });
    expect(schemas['datasets.expenses_by_month.Columns'].properties?.month).toEqual({
      type: 'array',
      items: { type: 'string', nullable: true },
    });
    const fields = schemas['datasets.expenses_by_month.Result'].properties?.schema as SchemaObject;
    expect(JSON.stringify(fields)).toContain('"enum":["month","total_amount"]');
  });

  it('falls back to any cell when the model declares no columns', () => {
    const project = example();
    const model = project.models.find((m) => m.name === 'expenses_by_month');
    if (!model) throw new Error('the example has changed');
    model.columns = [];
    const { schemas } = projectItemDocs(project, PREFIX, MAX_ROWS);
    expect(schemas['datasets.expenses_by_month.Record']).toEqual({
      type: 'object',
      additionalProperties: { $ref: '#/components/schemas/Cell' },
    });
    const query = queryOf(project, '/datasets/expenses_by_month/results');
    expect(query.x_select.schema).toMatchObject({ items: { type: 'string' } });
    expect((query.x_select.schema as SchemaObject).items).not.toHaveProperty('enum');
  });

  it('lists written option ids, not those a query gives, and repeats list selections', () => {
    const query = queryOf(example(), '/datasets/expenses_grouped/results');
    expect(query.group_by.schema).toEqual({
      type: 'string',
      enum: ['trans', 'day', 'month', 'cat', 'subcat'],
    });
    expect(query.category).toMatchObject({ explode: true, schema: { items: { type: 'string' } } });
    expect((query.category.schema as SchemaObject).items).not.toHaveProperty('enum');
    // Disabled unless grouping by transaction: any value is then ignored, which the document says.
    expect(query.limit.schema).toEqual({
      type: 'number',
      'x-disabled-unless': { group_by: ['trans'] },
    });
    expect(query.limit.description).toContain('Disabled unless group_by is trans');
    expect(query.x_select.schema).toMatchObject({
      items: { enum: expect.arrayContaining(['id']) },
    });
    const refresh = queryOf(example(), '/datasets/expenses_grouped/parameters');
    expect((refresh.x_parent_param.schema as SchemaObject).enum).toContain('group_by');
    expect(refresh).not.toHaveProperty('x_limit');
  });

  it('takes numbers as JSON numbers or strings in a body', () => {
    const post = projectItemDocs(example(), PREFIX, MAX_ROWS).paths[
      `/${PREFIX}/datasets/expenses_grouped/results`
    ].post;
    const body = (post?.requestBody as { content: Record<string, { schema: SchemaObject }> })
      .content['application/json'].schema;
    expect(body.properties?.limit).toMatchObject({
      anyOf: [{ type: 'number' }, { type: 'string' }],
    });
    expect(body.properties?.between_filter).toMatchObject({ type: 'array', minItems: 2 });
    expect(body.properties?.x_orientation).toMatchObject({ enum: ['records', 'rows', 'columns'] });
  });

  it('asks for a token and documents 403 as the scope says', () => {
    const { paths } = projectItemDocs(example(), PREFIX, MAX_ROWS);
    const open = paths[`/${PREFIX}/datasets/expenses_by_month/results`].get;
    const closed = paths[`/${PREFIX}/datasets/expense_transactions/results`].get;
    expect(open?.security).toContainEqual({});
    expect(closed?.security).not.toContainEqual({});
    expect(Object.keys(open?.responses ?? {})).toEqual([
      '200',
      '304',
      '400',
      '401',
      '404',
      '406',
      '429',
      '500',
      '503',
    ]);
    expect(closed?.responses).toHaveProperty('403');
    const post = paths[`/${PREFIX}/datasets/expense_transactions/results`].post;
    expect(Object.keys(post?.responses ?? {})).toEqual(
      expect.arrayContaining(['403', '413', '415']),
    );
    const png = paths[`/${PREFIX}/dashboards/expenses_dashboard/results`].get;
    expect(png?.responses?.['200']).toMatchObject({ content: { 'image/png': {} } });
    expect(png?.responses?.['200']).not.toMatchObject({ content: { 'text/html': {} } });
  });
});
