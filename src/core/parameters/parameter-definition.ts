import type { Decimal } from '@/core/parameters/decimal';
import type { Problems } from '@/core/project-errors';
import type { UserField, UserFieldValue } from '@/core/user-fields';

/** The parameter definitions of a project, as `parameters:` of project.yml declares them. */

export const WIDGET_TYPES = [
  'single_select',
  'multi_select',
  'date',
  'date_range',
  'number',
  'number_range',
  'text',
] as const;
export type WidgetType = (typeof WIDGET_TYPES)[number];
export type SelectWidgetType = 'single_select' | 'multi_select';
export type ValueWidgetType = Exclude<WidgetType, SelectWidgetType>;

export const TEXT_INPUT_TYPES = [
  'text',
  'textarea',
  'number',
  'date',
  'datetime-local',
  'month',
  'time',
  'color',
  'password',
] as const;
export type TextInputType = (typeof TEXT_INPUT_TYPES)[number];

/**
 * Where something was written, so that problems found later (after the build's queries) still name the
 * place: a path in the file, plus the row number when it came from a query's result.
 */
export interface Origin {
  path: string;
  /** 0-based row of the query result; null when written out in the file. */
  row: number | null;
}

export interface OptionDefinition {
  id: string;
  label: string;
  /** Null: visible to everyone. Otherwise only to signed-in callers whose user field is listed. */
  userGroups: UserFieldValue[] | null;
  /** The parent's option ids this option belongs to; empty when the parameter has no parent. */
  parentOptionIds: string[];
  isDefault: boolean;
  /** Project-defined custom fields, exposed to SQL templates with the selection. */
  fields: Record<string, unknown>;
  origin: Origin;
}

export type ValueSpec =
  | { widget: 'date'; min: string; max: string; default: string }
  | { widget: 'date_range'; min: string; max: string; defaultStart: string; defaultEnd: string }
  | { widget: 'number'; min: Decimal; max: Decimal; increment: Decimal; default: Decimal }
  | {
      widget: 'number_range';
      min: Decimal;
      max: Decimal;
      increment: Decimal;
      defaultLower: Decimal;
      defaultUpper: Decimal;
    }
  | { widget: 'text'; default: string; inputType: TextInputType };

/** The widget a non-select parameter shows for some of its parent's option ids. */
export interface Variant {
  /** Null when the parameter has no parent: the one variant always applies. */
  parentOptionIds: string[] | null;
  spec: ValueSpec;
  origin: Origin;
}

interface BaseDefinition {
  name: string;
  label: string;
  description: string;
  parent: string | null;
  /** `parameters[3]`: where the definition is in project.yml. */
  at: string;
}

export interface SelectDefinition extends BaseDefinition {
  kind: 'select';
  widget: SelectWidgetType;
  /** The user field that options' `user_groups` are matched against. */
  userGroupField: UserField | null;
  /** Written out, or (once resolved) from the `options_from` query's rows. */
  options: OptionDefinition[];
  optionsSql: string | null;
  /** `default` of the parameter; null to use the options marked `is_default`. */
  defaultIds: string[] | null;
  showSelectAll: boolean;
  orderMatters: boolean;
}

/** Values written beside `from_query`; the query's row completes them at each build. */
export interface FromQuery {
  sql: string;
  written: Record<string, unknown>;
}

export interface ValueDefinition extends BaseDefinition {
  kind: 'value';
  widget: ValueWidgetType;
  /** Empty until resolved when the bounds come from a query. */
  variants: Variant[];
  fromQuery: FromQuery | null;
}

export type ParameterDefinition = SelectDefinition | ValueDefinition;

/** What the parsers need to record problems. */
export interface ProblemSink {
  file: string;
  problems: Problems;
}

/** Records a problem about `key` of something written at `origin`. */
export function report(sink: ProblemSink, origin: Origin, key: string, message: string): void {
  if (origin.row === null) {
    sink.problems.add(sink.file, key ? `${origin.path}.${key}` : origin.path, message);
  } else {
    const column = key ? `, column ${key}` : '';
    sink.problems.add(sink.file, origin.path, `row ${origin.row + 1}${column}: ${message}`);
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
