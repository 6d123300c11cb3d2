import { runtime } from 'nunjucks';
import { Binder } from '@/engine/templating/binder';
import type { BoundValue } from '@/engine/templating/bound-value';
import { selectionView, strict } from '@/engine/templating/selection-views';
import type { CallerView, SelectionValues } from '@/parameters/selection-value';
import type { UserField } from '@/project/user-fields';

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

export function templateContext(scope: TemplateScope): Record<string, unknown> {
  return {
    // Model names are the project's own identifiers; safe text keeps autoescaping off them.
    ref: (name: unknown) => new runtime.SafeString(scope.ref(String(name))),
    params: paramsView(scope),
    user: userView(scope),
  };
}
