import { Binder } from '@/engine/templating/binder';
import { renderTemplate } from '@/engine/templating/sql-renderer';
import { templateContext } from '@/engine/templating/template-context';
import type { Env } from '@/engine/connections/connection-registry';

/** A build model's SQL (no selections, no user), with `env` as its environment when given. */
function render(sql: string, env?: Env): string {
  const binder = new Binder();
  const context = templateContext({
    binder,
    ref: (name) => `"${name}"`,
    userFields: [],
    what: 'build model "orders"',
    env,
  });
  return binder.finish(renderTemplate('models/orders.sql', sql, context)).sql;
}

describe('env_var() in build models', () => {
  const size = "SELECT * FROM range({{ env_var('ORDERS_ROWS', 2000000) }})";

  it('gives the variable, or the default, as a number literal', () => {
    expect(render(size, { ORDERS_ROWS: '20000' })).toBe('SELECT * FROM range(20000)');
    expect(render(size, {})).toBe('SELECT * FROM range(2000000)');
    expect(render(size, { ORDERS_ROWS: ' ' })).toBe('SELECT * FROM range(2000000)');
  });

  it('refuses a value that is not a number where the default is one', () => {
    expect(() => render(size, { ORDERS_ROWS: '1); DROP TABLE x; --' })).toThrow(
      'environment variable ORDERS_ROWS must be a number',
    );
  });

  it('quotes a text value as a SQL string literal', () => {
    expect(render("SELECT {{ env_var('LABEL', 'none') }} AS l", { LABEL: "it's" })).toBe(
      "SELECT 'it''s' AS l",
    );
    expect(() => render("SELECT {{ env_var('MISSING') }}", {})).toThrow(
      'environment variable MISSING is not set and has no default',
    );
  });

  it('is for build models only: SQL rendered per request cannot read the environment', () => {
    expect(() => render(size)).toThrow('cannot read env_var(): only build models can');
  });
});
