import type { NextFunction, Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { etagMatches } from '@/http/reply/content-coding';
import { HttpReply, KeptBody, sendReply } from '@/http/reply/http-reply';
import { pagePolicy } from '@/http/security-headers';
import { FAVICON_PATH } from '@/openapi/favicon';

/**
 * What Swagger UI (`/docs`, `P/docs`, served by @nestjs/swagger from swagger-ui-dist) loads: its scripts and
 * stylesheet from beside the page, the page's own `<style>` blocks and style attributes, its icons as data:
 * URLs, and the calls of the Authorize dialog and of "Try it out" to this origin. Nothing else.
 */
export const SWAGGER_UI_POLICY = pagePolicy({
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
});

/**
 * A Swagger UI plugin, sent to the browser as its source (@nestjs/swagger writes a function of
 * `swaggerOptions` into `swagger-ui-init.js` with `toString()`, a script of this origin), so it names nothing
 * but the browser's globals and what Swagger UI hands it. The options' `plugins` replace Swagger UI's list,
 * so it brings back the one @nestjs/swagger's page has (DownloadUrl), then adds `JsonSchema_string_date`:
 * Swagger UI's array input looks up `JsonSchema_<type>_<format>` for its items without falling back
 * silently, and has no component for `format: date`, so the GET form of a date range (`date_range`, an array
 * of two dates) logged "Could not find component: JsonSchema_string_date" on "Try it out". A date is typed
 * as the text input every other string gets.
 */
function dreySwaggerUiPlugins(system: {
  React: { createElement(type: unknown, props: unknown): unknown };
  getComponent(name: string): unknown;
}): unknown[] {
  const bundle = (
    globalThis as unknown as { SwaggerUIBundle: { plugins: { DownloadUrl: unknown } } }
  ).SwaggerUIBundle;
  return [
    bundle.plugins.DownloadUrl,
    {
      components: {
        JsonSchema_string_date: function JsonSchemaStringDate(props: unknown) {
          return system.React.createElement(system.getComponent('JsonSchema_string'), props);
        },
      },
    },
  ];
}

/**
 * What Swagger UI's pages are set up with besides the document's URL:
 * - Drey's icon, by an absolute path: the page's own links are relative (`./docs/favicon-32x32.png`), which
 *   at `/docs/` (with the slash) named `/docs/docs/...`, a 404;
 * - the Authorize dialog without its paragraph on OAuth2 scopes: Swagger UI prints it for every OAuth2
 *   scheme whatever its scopes (none here: the login grants what the user may do), so no field of the
 *   scheme leaves it out; a line of the page's own style hides it;
 * - the plugins above.
 */
export const SWAGGER_UI_OPTIONS = {
  customfavIcon: FAVICON_PATH,
  customCss: '.swagger-ui .auth-container .scope-def { display: none; }',
  swaggerOptions: { plugins: [dreySwaggerUiPlugins] },
};

/**
 * Express middleware in front of Swagger UI's routes (they are not Nest controllers, so no `@Header`):
 * the page and its files get Swagger UI's policy in place of the API's.
 */
export function swaggerUiPolicy() {
  return (_request: Request, response: Response, next: NextFunction): void => {
    response.setHeader('Content-Security-Policy', SWAGGER_UI_POLICY);
    next();
  };
}

/** Swagger UI's files that its page loads and that compress; its PNG icons are left to express.static. */
const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=UTF-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=UTF-8',
  'swagger-ui.css': 'text/css; charset=UTF-8',
  'index.css': 'text/css; charset=UTF-8',
};

interface Asset {
  body: KeptBody;
  etag: string;
  type: string;
}

/**
 * Express middleware in front of Swagger UI's static files (express.static, which compresses nothing): its
 * scripts and stylesheets, 2.1 MB plain, are sent by the one writer, compressed by `Accept-Encoding`. Each
 * file is read at its first request and each compressed form made once per process, at the first request
 * that asks for it, at the `asset` effort (content-coding.ts; a fraction of a second of brotli on the thread
 * pool for the bundle: docs/performance.md, "Figures behind the code", "Content codings"), then sent as
 * kept. Not at start: every process would pay that CPU, the many a test run starts included, for a page
 * few of them serve. The map holds the four files named above.
 */
export function swaggerUiAssets() {
  const folder = dirname(require.resolve('swagger-ui-dist/absolute-path.js'));
  const kept = new Map<string, Asset>();
  return (request: Request, response: Response, next: NextFunction): void => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return next();
    // Under `/docs` and `P/docs`, and `P/docs/docs` where @nestjs/swagger serves them too.
    const name = request.path.replace(/^\/(?:docs\/)?/, '');
    if (name === 'swagger-ui-init.js') return generated(request, response, next);
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (type === undefined) return next();
    let asset = kept.get(name);
    if (!asset) {
      const bytes = readFileSync(join(folder, name));
      const etag = `"${createHash('sha1').update(bytes).digest('base64url')}"`;
      asset = { body: new KeptBody({ body: bytes }, 'asset'), etag, type };
      kept.set(name, asset);
    }
    const headers = { 'Content-Type': asset.type, 'Cache-Control': 'no-cache', ETag: asset.etag };
    const fresh = etagMatches(request.headers['if-none-match'], asset.etag);
    void sendReply(
      fresh
        ? new HttpReply(304, { ...headers, Vary: 'Accept-Encoding' }, null)
        : new HttpReply(200, headers, asset.body),
      response,
    );
  };
}

/** The last body sent of each generated file, by path: four paths at most (two files, two prefixes). */
const made = new Map<string, KeptBody>();

/**
 * Express middleware in front of what @nestjs/swagger writes itself with `res.send`: `swagger-ui-init.js`
 * (410 KB for the example project: the whole document, inlined) and `docs-json` (200 KB). It has no hook for
 * the body, so its `res.send` is wrapped for the request, as the `compression` middleware wraps `res.end`: a
 * 200's text goes to the one writer, as a kept body compressed once per process and per document (a body
 * equal to the last one sent at the path reuses its compressed forms; comparing 400 KB costs microseconds,
 * compressing it again tens of milliseconds).
 */
export function generated(request: Request, response: Response, next: NextFunction): void {
  if (request.method !== 'GET' && request.method !== 'HEAD') return next();
  const path = request.originalUrl.split('?', 1)[0];
  const send = response.send.bind(response);
  response.send = (body?: unknown) => {
    if (typeof body !== 'string' || response.statusCode !== 200) return send(body);
    let kept = made.get(path);
    if (kept?.kept.body !== body) {
      kept = new KeptBody({ body }, 'asset');
      if (made.size >= 4 && !made.has(path)) made.clear();
      made.set(path, kept);
    }
    // The type @nestjs/swagger set (res.type) stays: the reply adds no header.
    void sendReply(new HttpReply(200, {}, kept), response);
    return response;
  };
  next();
}
