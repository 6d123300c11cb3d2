/** The environment as the configuration reads it. */
export type Env = Record<string, string | undefined>;

/** A variable's value, trimmed; undefined when it is unset or blank. */
export function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** A comma-separated variable's entries, each trimmed, blanks left out; empty when it is unset. */
export function list(env: Env, name: string): string[] {
  return (text(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
