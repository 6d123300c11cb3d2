import { readFileSync } from 'node:fs';
import type { Express, Request, Response } from 'express';

/** ReDoc's standalone bundle, installed with the service: the pages load nothing from elsewhere. */
const BUNDLE_FILE = require.resolve('redoc/bundles/redoc.standalone.js');
const SCRIPT = 'redoc.standalone.js';

// The bundle draws a vendor logo from its CDN: the served copy points that image at an empty data URL
// instead (it then hides itself), and the policy keeps every other load on our own origin. Styles are
// injected at run time and the search runs in a blob worker.
const VENDOR_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
].join('; ');

function page(title: string, specUrl: string, scriptUrl: string): string {
  const escape = (text: string) =>
    text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escape(title)}</title>
    <style>body { margin: 0; padding: 0; }</style>
  </head>
  <body>
    <redoc spec-url="${escape(specUrl)}"></redoc>
    <script src="${escape(scriptUrl)}"></script>
  </body>
</html>
`;
}

/**
 * ReDoc over the OpenAPI document: `{base}/redoc` is the page, reading `{base}/docs-json`, and
 * `{base}/redoc/redoc.standalone.js` the bundle, for each base given (`''` for the root).
 */
export function serveRedoc(http: Express, bases: string[], title: string): void {
  let bundle: Buffer | undefined;
  for (const base of bases) {
    const html = page(title, `${base}/docs-json`, `${base}/redoc/${SCRIPT}`);
    http.get(`${base}/redoc`, (_request: Request, response: Response) => {
      response
        .status(200)
        .type('html')
        .set('Content-Security-Policy', POLICY)
        .set('Cache-Control', 'no-cache')
        .send(html);
    });
    http.get(`${base}/redoc/${SCRIPT}`, (_request: Request, response: Response) => {
      bundle ??= Buffer.from(readFileSync(BUNDLE_FILE, 'utf8').replaceAll(VENDOR_LOGO, 'data:,'));
      response
        .status(200)
        .type('application/javascript')
        .set('Cache-Control', 'public, max-age=86400')
        .send(bundle);
    });
  }
}
