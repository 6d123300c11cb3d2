import {
  OptionDefinition,
  Origin,
  ProblemSink,
  isRecord,
  report,
} from '@/core/parameters/parameter-definition';
import { idFrom, shown } from '@/core/parameters/raw-values';
import { UserField, UserFieldValue, valueMatchesType } from '@/core/user-fields';

/** Options of select parameters, written out in project.yml or read from the rows of `options_from`. */

const RESERVED = new Set([
  'id',
  'label',
  'user_groups',
  'user_group',
  'parent_option_ids',
  'parent_option_id',
  'is_default',
]);
/** Custom fields are read by SQL templates as `option.fields.<name>`, so they must be identifiers. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface OptionRules {
  /** The user field that `user_groups` are matched against; null when the parameter names none. */
  userGroupField: UserField | null;
  hasParent: boolean;
  /** Query rows: database types (bigint, numeric strings) are converted rather than refused. */
  fromRows: boolean;
}

export function parseWrittenOptions(
  raw: unknown,
  at: string,
  rules: OptionRules,
  sink: ProblemSink,
): OptionDefinition[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    sink.problems.add(sink.file, at, 'must be a non-empty list of options (id, label)');
    return [];
  }
  const options = raw.map((entry: unknown, index) => {
    const origin: Origin = { path: `${at}[${index}]`, row: null };
    if (isRecord(entry)) return parseOption(entry, origin, rules, sink);
    report(sink, origin, '', 'must be a mapping with id and label');
    return null;
  });
  return uniqueIds(options, sink);
}

export function optionsFromRows(
  rows: Record<string, unknown>[],
  at: string,
  rules: OptionRules,
  sink: ProblemSink,
): OptionDefinition[] {
  if (rows.length === 0) sink.problems.add(sink.file, at, 'the query returned no rows');
  const options = rows.map((row, index) => parseOption(row, { path: at, row: index }, rules, sink));
  return uniqueIds(options, sink);
}

function uniqueIds(options: (OptionDefinition | null)[], sink: ProblemSink): OptionDefinition[] {
  const seen = new Set<string>();
  const unique: OptionDefinition[] = [];
  for (const option of options) {
    if (option === null) continue;
    if (seen.has(option.id)) {
      report(sink, option.origin, 'id', `${shown(option.id)} is used by another option`);
      continue;
    }
    seen.add(option.id);
    unique.push(option);
  }
  return unique;
}

function parseOption(
  raw: Record<string, unknown>,
  origin: Origin,
  rules: OptionRules,
  sink: ProblemSink,
): OptionDefinition | null {
  let valid = true;
  const problem = (key: string, message: string) => {
    valid = false;
    report(sink, origin, key, message);
  };
  const id = idFrom(raw.id);
  if (id === null) problem('id', 'is required: a non-empty string or number');
  const label = labelFrom(raw.label);
  if (label === null) problem('label', 'is required: a string');
  const userGroups = readUserGroups(raw, rules, problem);
  const parentOptionIds = readParentIds(raw, rules, problem);
  const isDefault = readFlag(raw.is_default, rules.fromRows);
  if (isDefault === null) problem('is_default', 'must be true or false');
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (RESERVED.has(key)) continue;
    if (!FIELD_NAME.test(key)) {
      problem(key, 'a custom field name must be letters, digits and _ (not starting with a digit)');
    }
    fields[key] = rules.fromRows ? fromDatabase(value) : value;
  }
  if (!valid || id === null || label === null) return null;
  return { id, label, userGroups, parentOptionIds, isDefault: isDefault === true, fields, origin };
}

function labelFrom(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return null;
}

function readFlag(value: unknown, fromRows: boolean): boolean | null {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (fromRows && (value === 0 || value === 1)) return value === 1;
  if (fromRows && (value === 'true' || value === 'false')) return value === 'true';
  return null;
}

type Problem = (key: string, message: string) => void;

/** `parent_option_ids` (a list) or `parent_option_id` (one id), required exactly when there is a parent. */
function readParentIds(
  raw: Record<string, unknown>,
  rules: OptionRules,
  problem: Problem,
): string[] {
  const [key, value] = oneOf(raw, 'parent_option_ids', 'parent_option_id', problem);
  if (value === undefined) {
    if (rules.hasParent) problem('parent_option_ids', "is required: the parent's option ids");
    return [];
  }
  if (!rules.hasParent) {
    problem(key, 'needs a parent: set `parent` on the parameter');
    return [];
  }
  const list = key === 'parent_option_id' ? [value] : listOf(value, rules.fromRows);
  if (!Array.isArray(list) || list.length === 0) {
    problem(key, 'must be a non-empty list of option ids of the parent');
    return [];
  }
  const ids = list.map(idFrom);
  if (ids.some((id) => id === null)) {
    problem(key, 'every parent option id must be a non-empty string or number');
    return [];
  }
  return [...new Set(ids as string[])];
}

/** `user_groups` (a list) or `user_group` (one value), each fitting the parameter's user field. */
function readUserGroups(
  raw: Record<string, unknown>,
  rules: OptionRules,
  problem: Problem,
): UserFieldValue[] | null {
  const [key, value] = oneOf(raw, 'user_groups', 'user_group', problem);
  if (value === undefined) return null;
  const field = rules.userGroupField;
  if (field === null) {
    problem(key, 'needs `user_group_field` on the parameter: the user field to match');
    return null;
  }
  const list = key === 'user_group' ? [value] : listOf(value, rules.fromRows);
  if (!Array.isArray(list) || list.length === 0) {
    problem(key, `must be a non-empty list of values of the user field "${field.name}"`);
    return null;
  }
  const groups: UserFieldValue[] = [];
  for (const element of list as unknown[]) {
    const group = rules.fromRows ? coerce(element, field) : element;
    if (group === null || !valueMatchesType(group, field.type)) {
      problem(
        key,
        `${shown(element)} is not ${article(field.type)} ${field.type} value of the user field "${field.name}"`,
      );
    } else if (field.enum && !field.enum.includes(group as UserFieldValue)) {
      problem(key, `${shown(element)} is not one of ${field.enum.map(shown).join(', ')}`);
    } else {
      groups.push(group as UserFieldValue);
    }
  }
  return groups;
}

/** Reads one of two spellings of a key; both at once is a problem. */
function oneOf(
  raw: Record<string, unknown>,
  plural: string,
  singular: string,
  problem: Problem,
): [string, unknown] {
  const many = raw[plural] ?? undefined;
  const one = raw[singular] ?? undefined;
  if (many !== undefined && one !== undefined) {
    problem(singular, `give either ${plural} or ${singular}, not both`);
  }
  return many !== undefined ? [plural, many] : [singular, one];
}

/**
 * A list column of a query may reach us as text: DuckDB's `[a, b]`, or a JSON list. Ids with commas are
 * not supported in that form; a real list (array) carries them.
 */
function listOf(value: unknown, fromRows: boolean): unknown {
  if (!fromRows || typeof value !== 'string') return value;
  const text = value.trim();
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // Not JSON: DuckDB's own text form, read below.
    }
  }
  const inner = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return inner
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** Databases answer integers as bigint and decimals as strings; user fields hold JSON scalars. */
function coerce(value: unknown, field: UserField): unknown {
  if (typeof value === 'bigint') return field.type === 'string' ? value.toString() : Number(value);
  if (typeof value === 'string' && (field.type === 'integer' || field.type === 'number')) {
    return value.trim() === '' ? null : Number(value);
  }
  if (typeof value === 'number' && field.type === 'string') return String(value);
  if (typeof value === 'string' && field.type === 'boolean') {
    return value === 'true' ? true : value === 'false' ? false : null;
  }
  return value;
}

function fromDatabase(value: unknown): unknown {
  if (typeof value !== 'bigint') return value;
  return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}
