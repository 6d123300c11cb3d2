import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml } from '@/http/html';
import { pagePolicy } from '@/http/security-headers';
import { FAVICON_PATH } from '@/openapi/favicon';

/**
 * ReDoc's standalone bundle, served by the service itself: the pages load nothing from elsewhere. The build
 * copies it beside this module (scripts/redoc-bundle.js), so that the redoc package is needed only to build;
 * without the copy (tests run from the sources) it comes from the installed package.
 */
function bundleFile(): string {
  const copied = join(__dirname, 'redoc.standalone.js');
  return existsSync(copied) ? copied : require.resolve('redoc/bundles/redoc.standalone.js');
}
export const REDOC_SCRIPT = 'redoc.standalone.js';

// The bundle draws a vendor logo from its CDN: the served copy points that image at an empty data URL
// instead (it then hides itself), and the policy keeps every other load on our own origin: the bundle, the
// document it fetches, the styles it injects at run time (and the page's own) and its search, which runs in
// a blob worker. Its icon is Drey's own (favicon.ts).
const VENDOR_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
export const REDOC_POLICY = pagePolicy({
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  workerSrc: ['blob:'],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
});

/** The bundle as served: read once, with the CDN logo taken out. */
export function redocBundle(): string {
  return readFileSync(bundleFile(), 'utf8').replaceAll(VENDOR_LOGO, 'data:,');
}

/** The page of `{base}/redoc`: ReDoc over `{base}/docs-json`, with the bundle from `{base}/redoc/`. */
export function redocPage(title: string, base: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    <link rel="icon" type="image/png" href="${FAVICON_PATH}" />
    <style>body { margin: 0; padding: 0; }</style>
  </head>
  <body>
    <redoc spec-url="${escapeHtml(`${base}/docs-json`)}"></redoc>
    <script src="${escapeHtml(`${base}/redoc/${REDOC_SCRIPT}`)}"></script>
  </body>
</html>
`;
}
