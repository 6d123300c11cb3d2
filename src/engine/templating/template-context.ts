import { runtime } from 'nunjucks';
import type { Env } from '@/engine/connections/connection-registry';
import { quoteString } from '@/engine/sql/sql-text';
import { Binder, TemplateUseError } from '@/engine/templating/binder';
import type { BoundValue } from '@/engine/sql/bound-value';
import { selectionView, strict } from '@/engine/templating/selection-views';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import type { UserField } from '@/core/user-fields';

/** What a template is rendered for: the values it may read and how `ref()` names a model. */
export interface TemplateScope {
  binder: Binder;
  /** The SQL text naming a model; throws when this template may not read it. */
  ref: (name: string) => string;
  /** Absent when the SQL is computed once for everyone (build models, option queries). */
  selections?: SelectionValues;
  caller?: CallerView;
  userFields: readonly UserField[];
  /** Names the template in messages: `build model "x"`. */
  what: string;
  /** The environment variables `env_var()` reads: given to build models only. */
  env?: Env;
}

function paramsView(scope: TemplateScope): Record<string, unknown> {
  const { selections, what, binder } = scope;
  if (!selections) {
    return strict(
      {},
      (key) => `${what} cannot read params.${key}: it is computed once for everyone`,
      'params',
    );
  }
  const views: Record<string, unknown> = {};
  for (const [name, selection] of Object.entries(selections)) {
    views[name] = selectionView(binder, name, selection);
  }
  return strict(
    views,
    (key) =>
      `${what} has no selection for parameter "${key}" (is it one of the dataset's parameters?)`,
    'params',
  );
}

function userValue(field: UserField, value: unknown): BoundValue | boolean | null {
  if (value === null || value === undefined)
    return field.type === 'boolean' ? null : { type: 'null', value: null };
  switch (field.type) {
    case 'string':
      return { type: 'text', value: typeof value === 'string' ? value : JSON.stringify(value) };
    case 'integer':
      return { type: 'integer', value: Number(value) };
    case 'number':
      return { type: 'number', value: Number(value) };
    case 'boolean':
      return value === true;
  }
}

/**
 * `user.username` and the user's string and number fields are bound like selections. Booleans stay raw:
 * templates need them for `{% if %}`, and true or false cannot change a statement.
 */
function userView(scope: TemplateScope): Record<string, unknown> {
  const { caller, what, binder } = scope;
  if (!caller) {
    return strict(
      {},
      (key) => `${what} cannot read user.${key}: it is computed once for everyone`,
      'user',
    );
  }
  const view: Record<string, unknown> = {
    username: binder.bind(
      caller.username === null
        ? { type: 'null', value: null }
        : { type: 'text', value: caller.username },
    ),
    is_admin: caller.isAdmin,
  };
  for (const field of scope.userFields) {
    const value = userValue(field, caller.fields[field.name]);
    view[field.name] = typeof value === 'object' && value !== null ? binder.bind(value) : value;
  }
  return strict(view, (key) => `no user field named "${key}"`, 'user');
}

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * `{{ env_var('ORDERS_ROWS', 2000000) }}`: an environment variable as a SQL literal, for build models (the
 * value is baked into the build, so every server process serves the same data whatever its own environment).
 * A number default makes it a number, checked as one; otherwise it is a quoted string. The project already
 * names environment variables (connections' `url_env`), so this reaches nothing the project could not.
 */
function envVar(scope: TemplateScope) {
  return (name: unknown, fallback?: unknown): runtime.SafeString => {
    const { env, what } = scope;
    if (!env) {
      throw new TemplateUseError(`${what} cannot read env_var(): only build models can`, 'env_var');
    }
    if (typeof name !== 'string' || !VARIABLE.test(name)) {
      throw new TemplateUseError('env_var() takes the name of an environment variable', 'env_var');
    }
    const set = env[name]?.trim();
    const value = set === undefined || set === '' ? fallback : set;
    if (typeof value !== 'string' && typeof value !== 'number') {
      if (value === undefined || value === null) {
        throw new TemplateUseError(`environment variable ${name} is not set and has no default`);
      }
      throw new TemplateUseError('the default of env_var() must be a number or a text', 'env_var');
    }
    const text = String(value);
    if (typeof fallback === 'number') {
      if (!NUMBER.test(text)) {
        throw new TemplateUseError(`environment variable ${name} must be a number, got "${text}"`);
      }
      return new runtime.SafeString(text);
    }
    return new runtime.SafeString(quoteString(text));
  };
}

export function templateContext(scope: TemplateScope): Record<string, unknown> {
  return {
    env_var: envVar(scope),
    // Model names are the project's own identifiers; safe text keeps autoescaping off them.
    ref: (name: unknown) => new runtime.SafeString(scope.ref(String(name))),
    params: paramsView(scope),
    user: userView(scope),
  };
}
