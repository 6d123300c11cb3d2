import type { SchemaObject } from '@nestjs/swagger';
import { ref, Schemas } from '@/openapi/common-schemas';
import { TEXT_INPUT_TYPES } from '@/core/parameters/parameter-definition';

/**
 * OpenAPI schemas of the widget parameters (interface 2.7, `widget-json.ts`): one schema per widget type,
 * told apart by `widget_type`, for the current layout and for the legacy one (which has no `description`).
 */

const OPTION: SchemaObject = {
  type: 'object',
  required: ['id', 'label'],
  properties: { id: { type: 'string' }, label: { type: 'string' } },
};

const DATE: SchemaObject = { type: 'string', format: 'date', description: 'YYYY-MM-DD' };

/** The fields of each widget type beside `widget_type`, `name`, `label` and `description`. */
const WIDGET_FIELDS: Record<string, Record<string, SchemaObject>> = {
  disabled: {},
  single_select: {
    options: { type: 'array', items: ref('ParameterOption') },
    trigger_refresh: { type: 'boolean' },
    selected_id: {
      type: 'string',
      nullable: true,
      description: 'Null only when no option is available to the caller',
    },
  },
  multi_select: {
    options: { type: 'array', items: ref('ParameterOption') },
    trigger_refresh: { type: 'boolean' },
    show_select_all: { type: 'boolean' },
    order_matters: { type: 'boolean' },
    selected_ids: { type: 'array', items: { type: 'string' } },
  },
  date: { min_date: DATE, max_date: DATE, selected_date: DATE },
  date_range: {
    min_date: DATE,
    max_date: DATE,
    selected_start_date: DATE,
    selected_end_date: DATE,
  },
  number: {
    min_value: { type: 'number' },
    max_value: { type: 'number' },
    increment: { type: 'number' },
    selected_value: { type: 'number' },
  },
  number_range: {
    min_value: { type: 'number' },
    max_value: { type: 'number' },
    increment: { type: 'number' },
    selected_lower_value: { type: 'number' },
    selected_upper_value: { type: 'number' },
  },
  text: {
    entered_text: { type: 'string' },
    input_type: { type: 'string', enum: [...TEXT_INPUT_TYPES] },
  },
};

/** `single_select` → `SingleSelectWidget`. */
function widgetName(widgetType: string, legacy: boolean): string {
  const camel = widgetType.replace(/(^|_)([a-z])/g, (_, __, letter: string) =>
    letter.toUpperCase(),
  );
  return `${legacy ? 'Legacy' : ''}${camel}Widget`;
}

function widgetSchemas(legacy: boolean): Schemas {
  const schemas: Schemas = {};
  const common: Record<string, SchemaObject> = {
    name: { type: 'string', description: 'The key to pass a selection with' },
    label: { type: 'string' },
    ...(legacy ? {} : { description: { type: 'string', description: 'May be empty' } }),
  };
  for (const [widgetType, fields] of Object.entries(WIDGET_FIELDS)) {
    const name = widgetName(widgetType, legacy);
    const properties = {
      widget_type: { type: 'string', enum: [widgetType] },
      ...common,
      ...fields,
    };
    schemas[name] = { type: 'object', required: Object.keys(properties), properties };
  }
  const union = legacy ? 'LegacyWidget' : 'Widget';
  // No `discriminator`: generators read a schema that extends a discriminated one (a dataset's widgets
  // with their names, result-schemas.ts) as inheritance and drop `widget_type`; its enum tells them apart.
  schemas[union] = {
    description: 'A widget parameter; `widget_type` says which fields it has',
    oneOf: Object.keys(WIDGET_FIELDS).map((widgetType) => ref(widgetName(widgetType, legacy))),
  };
  schemas[legacy ? 'LegacyParametersResponse' : 'ParametersResponse'] = {
    type: 'object',
    required: ['parameters'],
    properties: { parameters: { type: 'array', items: ref(union) } },
  };
  return schemas;
}

/** Widgets and parameters responses of both layouts. */
export const PARAMETER_SCHEMAS: Schemas = {
  ParameterOption: OPTION,
  ...widgetSchemas(false),
  ...widgetSchemas(true),
};
