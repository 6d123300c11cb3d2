import { checkOptionReferences, checkParents } from '@/core/parameters/check-references';
import {
  ParameterDefinition,
  ProblemSink,
  SelectDefinition,
  SelectWidgetType,
  WIDGET_TYPES,
  WidgetType,
  isRecord,
} from '@/core/parameters/parameter-definition';
import { parseWrittenOptions } from '@/core/parameters/parse-options';
import { parseValueBody, readSql } from '@/core/parameters/parse-value-parameter';
import { idFrom, shown } from '@/core/parameters/raw-values';
import { SPEC_KEYS } from '@/core/parameters/value-spec';
import { didYouMean } from '@/core/did-you-mean';
import type { Problems } from '@/core/project-errors';
import type { UserField } from '@/core/user-fields';

/** `x_` names are the built-ins of the endpoints (`x_verify_params`, `x_limit`...). */
const NAME = /^(?!x_)[a-z][a-z0-9_]{0,62}$/;
const COMMON_KEYS = ['name', 'widget', 'label', 'description', 'parent'];
const SELECT_KEYS = ['user_group_field', 'options', 'options_from', 'default'];
const MULTI_KEYS = ['show_select_all', 'order_matters'];

export interface DefinitionContext {
  file: string;
  userFields: UserField[];
  problems: Problems;
}

/**
 * Parses `parameters:` of project.yml. Every problem is recorded with its path (`parameters[3].default`),
 * all at once; the caller throws when there are any. Options, bounds and defaults that come from queries
 * are completed by `resolveParameters` after each build.
 */
export function parseParameterDefinitions(
  raw: unknown,
  ctx: DefinitionContext,
): ParameterDefinition[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    ctx.problems.add(ctx.file, 'parameters', 'must be a list of parameters');
    return [];
  }
  const defs: ParameterDefinition[] = [];
  const names = new Set<string>();
  raw.forEach((entry: unknown, index) => {
    const at = `parameters[${index}]`;
    if (!isRecord(entry)) {
      ctx.problems.add(ctx.file, at, 'must be a mapping with name, widget and label');
      return;
    }
    const def = parseDefinition(entry, at, ctx);
    if (def === null) return;
    if (names.has(def.name)) {
      ctx.problems.add(ctx.file, `${at}.name`, `"${def.name}" is defined twice`);
      return;
    }
    names.add(def.name);
    defs.push(def);
  });
  checkParents(defs, ctx);
  checkOptionReferences(defs, ctx, 'parse');
  return defs;
}

function knownKeys(type: WidgetType): string[] {
  const select = type === 'single_select' || type === 'multi_select';
  return [
    ...COMMON_KEYS,
    ...(select ? SELECT_KEYS : ['variants', 'from_query', ...SPEC_KEYS[type]]),
    ...(type === 'multi_select' ? MULTI_KEYS : []),
  ];
}

function parseDefinition(
  item: Record<string, unknown>,
  at: string,
  ctx: DefinitionContext,
): ParameterDefinition | null {
  const problem = (key: string, message: string) =>
    ctx.problems.add(ctx.file, `${at}.${key}`, message);
  const { name, widget } = item;
  const validName = typeof name === 'string' && NAME.test(name);
  if (!validName) problem('name', 'must be a snake_case name (a-z, 0-9, _; not starting with x_)');
  const validWidget = WIDGET_TYPES.includes(widget as WidgetType);
  if (!validWidget) {
    problem(
      'widget',
      `${widget === undefined ? 'is required:' : 'must be'} one of ${WIDGET_TYPES.join(', ')}`,
    );
  }
  const label = item.label;
  if (typeof label !== 'string' || label.trim() === '') problem('label', 'is required: a string');
  const description = item.description ?? '';
  if (typeof description !== 'string') problem('description', 'must be a string');
  const parent = item.parent ?? null;
  if (parent !== null && typeof parent !== 'string') problem('parent', 'must be a parameter name');
  // Unknown keys are reported whether the widget is known or not: `widgit: date` is a misspelt key, and
  // saying only that `widget` is missing would hide it. Without a widget, any widget's keys are known.
  const known = new Set(
    validWidget ? knownKeys(widget as WidgetType) : WIDGET_TYPES.flatMap(knownKeys),
  );
  for (const key of Object.keys(item)) {
    if (known.has(key)) continue;
    const of = validWidget ? `a ${widget as string} parameter` : 'a parameter';
    problem(key, `is not a known key of ${of}${didYouMean(key, known)}`);
  }
  if (!validName || !validWidget) return null;

  const type = widget as WidgetType;
  const base = {
    name,
    label: typeof label === 'string' ? label : '',
    description: typeof description === 'string' ? description : '',
    parent: typeof parent === 'string' ? parent : null,
    at,
  };
  if (type === 'single_select' || type === 'multi_select') {
    return {
      kind: 'select',
      widget: type,
      ...base,
      ...parseSelectBody(item, type, at, base.parent !== null, ctx),
    };
  }
  return {
    kind: 'value',
    widget: type,
    ...base,
    ...parseValueBody(item, type, at, base.parent !== null, ctx),
  };
}

type SelectBody = Omit<
  SelectDefinition,
  'kind' | 'widget' | 'name' | 'label' | 'description' | 'parent' | 'at'
>;

function parseSelectBody(
  item: Record<string, unknown>,
  widget: SelectWidgetType,
  at: string,
  hasParent: boolean,
  ctx: DefinitionContext,
): SelectBody {
  const sink: ProblemSink = ctx;
  const problem = (key: string, message: string) =>
    ctx.problems.add(ctx.file, `${at}.${key}`, message);

  let userGroupField: UserField | null = null;
  if (item.user_group_field !== undefined) {
    userGroupField = ctx.userFields.find((field) => field.name === item.user_group_field) ?? null;
    if (userGroupField === null) {
      const known = ctx.userFields.map((field) => field.name).join(', ') || 'none';
      problem(
        'user_group_field',
        `${shown(item.user_group_field)} is not a user field (user fields: ${known})`,
      );
    }
  }

  let options: SelectBody['options'] = [];
  let optionsSql: string | null = null;
  if (item.options !== undefined && item.options_from !== undefined) {
    problem('options_from', 'give either options or options_from, not both');
  } else if (item.options_from !== undefined) {
    optionsSql = readSql(item.options_from, `${at}.options_from`, sink);
  } else if (item.options !== undefined) {
    const rules = { userGroupField, hasParent, fromRows: false };
    options = parseWrittenOptions(item.options, `${at}.options`, rules, sink);
  } else {
    problem('options', 'is required (or options_from: a query giving the options)');
  }

  return {
    userGroupField,
    options,
    optionsSql,
    defaultIds: readDefaultIds(item.default, widget, problem),
    showSelectAll: readBoolean(item.show_select_all, true, 'show_select_all', problem),
    orderMatters: readBoolean(item.order_matters, false, 'order_matters', problem),
  };
}

function readDefaultIds(
  raw: unknown,
  widget: SelectWidgetType,
  problem: (key: string, message: string) => void,
): string[] | null {
  if (raw === undefined || raw === null) return null;
  if (widget === 'single_select') {
    const id = idFrom(raw);
    if (id === null) problem('default', 'must be one option id');
    return id === null ? null : [id];
  }
  const ids = Array.isArray(raw) ? raw.map(idFrom) : [null];
  if (ids.some((id) => id === null)) {
    problem('default', 'must be a list of option ids');
    return null;
  }
  return [...new Set(ids as string[])];
}

function readBoolean(
  raw: unknown,
  fallback: boolean,
  key: string,
  problem: (key: string, message: string) => void,
): boolean {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw === 'boolean') return raw;
  problem(key, 'must be true or false');
  return fallback;
}
