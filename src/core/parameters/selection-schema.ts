import type { WidgetType } from '@/core/parameters/parameter-definition';

/**
 * A parameter's selection as JSON Schema, derived once for every door that states it: the OpenAPI document
 * (item-paths.ts, from the project's definitions) and the MCP tools' input schemas (mcp-schemas.ts, from the
 * widgets a caller sees). The shape follows the widget, as the selection reader takes it
 * (selection-reader.ts): an option id, a list of them, a date, two dates, a number, two numbers, a text.
 * Each door narrows it with what it knows (the option ids, the bounds) and writes its own description.
 */
export type SelectionSchema = {
  type?: 'string' | 'number' | 'array';
  format?: 'date';
  enum?: string[];
  items?: SelectionSchema;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  anyOf?: SelectionSchema[];
};

export interface SelectionNarrowing {
  /** The ids a select may take, when they are known; empty or absent: any string. */
  optionIds?: readonly string[];
  /** The bounds of a number, and of each end of a number range. */
  bounds?: { minimum: number; maximum: number };
  /**
   * Numbers as a JSON body may carry them: a number, or a string holding a decimal number, which keeps
   * every digit (selection-request.ts). A query string's are text anyway.
   */
  decimalStrings?: boolean;
}

export function selectionValueSchema(
  widget: WidgetType,
  narrowing: SelectionNarrowing = {},
): SelectionSchema {
  const { optionIds = [], bounds, decimalStrings = false } = narrowing;
  const id: SelectionSchema =
    optionIds.length > 0 ? { type: 'string', enum: [...optionIds] } : { type: 'string' };
  const number: SelectionSchema = { type: 'number', ...bounds };
  const amount: SelectionSchema = decimalStrings ? { anyOf: [number, { type: 'string' }] } : number;
  switch (widget) {
    case 'single_select':
      return id;
    case 'multi_select':
      return { type: 'array', items: id };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'date_range':
      return { type: 'array', items: { type: 'string', format: 'date' }, minItems: 2, maxItems: 2 };
    case 'number':
      return amount;
    case 'number_range':
      return { type: 'array', items: amount, minItems: 2, maxItems: 2 };
    case 'text':
      return { type: 'string' };
  }
}
