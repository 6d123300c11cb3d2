import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/server';

/** Node's own require, put on the spec's global by `native-require.environment.js`. */
declare const nativeRequire: NodeJS.Require;

const DIST = join(REPO_ROOT, 'dist');
const DOC = join(REPO_ROOT, 'docs', 'architecture.md');

function controllerFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return controllerFiles(path);
    return /\.controller\.js$/.test(entry.name) ? [path] : [];
  });
}

/** A route as `METHOD /path`. */
type Route = string;

/**
 * Every route whose access is `admin`, read from the compiled controllers as the bearer guard reads it
 * (the handler's `@AdminOnly()` or `@Public()` over its class's), as `METHOD /path`.
 */
function adminRoutes(): Route[] {
  nativeRequire('reflect-metadata');
  // The metadata lives in Node's realm, whose Reflect the polyfill extended: read it through Nest's Reflector,
  // as the guard does.
  const { Reflector } = nativeRequire('@nestjs/core') as typeof import('@nestjs/core');
  const reflector = new Reflector();
  const meta = <T>(key: string, target: object) =>
    reflector.get<T | undefined>(key, target as never);
  const { PATH_METADATA, METHOD_METADATA } = nativeRequire('@nestjs/common/constants') as {
    PATH_METADATA: string;
    METHOD_METADATA: string;
  };
  const { RequestMethod } = nativeRequire('@nestjs/common') as {
    RequestMethod: Record<number, string>;
  };
  // The key the decorators write: fixed here, since the file that exports it may move.
  const ACCESS = 'drey:access';
  const join2 = (...parts: string[]) =>
    '/' +
    parts
      .flatMap((part) => part.split('/'))
      .filter(Boolean)
      .join('/');
  const routes: Route[] = [];
  for (const file of controllerFiles(DIST)) {
    for (const type of Object.values(nativeRequire(file) as Record<string, unknown>)) {
      if (typeof type !== 'function') continue;
      const base = meta<string>(PATH_METADATA, type);
      if (base === undefined) continue;
      const proto = (type as { prototype: object }).prototype;
      for (const name of Object.getOwnPropertyNames(proto)) {
        // Read as a property, not through the prototype: a getter would run on no instance.
        const handler = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
        if (typeof handler !== 'function') continue;
        const method = meta<number>(METHOD_METADATA, handler);
        if (method === undefined) continue;
        const access = meta<string>(ACCESS, handler) ?? meta<string>(ACCESS, type);
        if (access !== 'admin') continue;
        const paths = [meta<string | string[]>(PATH_METADATA, handler) ?? '/'].flat();
        for (const path of paths) routes.push(`${RequestMethod[method]} ${join2(base, path)}`);
      }
    }
  }
  return [...new Set(routes)].sort();
}

/** The rows of the table under "## Administrators' routes" in docs/architecture.md, as `METHOD /path`. */
function documentedRoutes(): Route[] {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf("\n## Administrators' routes");
  expect(start).toBeGreaterThan(0);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const rows = [...section.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE)` +\| `([^`]+)` +\|/gm)];
  return rows.map(([, method, path]) => `${method} ${path}`).sort();
}

describe("the administrators' routes", () => {
  it('are the ones docs/architecture.md lists, no more and no fewer', () => {
    const routes = adminRoutes();
    // Builds, users, the audit log and embedding tokens at least: a scan that found none would prove nothing.
    expect(routes).toEqual(
      expect.arrayContaining([
        'POST /api/service-v0/project/:project/:version/build',
        'GET /api/service-v0/project/:project/:version/audit',
      ]),
    );
    expect(documentedRoutes()).toEqual(routes);
  });
});
