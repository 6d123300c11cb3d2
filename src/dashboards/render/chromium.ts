import { accessSync, constants } from 'node:fs';
import type { Browser, ConsoleMessage, HTTPRequest, Page } from 'puppeteer-core';
import type { JsonLogger } from '@/runtime/json-logger';

/**
 * Chromium as the renderer uses it: how it is launched and how a page is made safe to render in. No Nest
 * here, and nothing about pooling (browser-pool.ts).
 */

// `pipe: true` below talks to Chromium over a pipe: no debugging port that another local process could use.
// These flags keep it from calling home; the page's requests are refused by the filter in preparePage().
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--disable-default-apps',
  '--mute-audio',
  '--hide-scrollbars',
  '--font-render-hinting=none',
];

/** The layout's `securitypolicyviolation` listener writes this; see page-layout.ts. */
const REFUSED_MARK = '[drey] refused ';

/** Why Chromium cannot run from `executablePath` (missing or not executable), or undefined when it can. */
export function chromiumMissing(executablePath: string): string | undefined {
  try {
    accessSync(executablePath, constants.X_OK);
    return undefined;
  } catch {
    return (
      `PNG dashboards need Chromium, and there is none at CHROMIUM_PATH (${executablePath}): install it ` +
      '(Debian: apt-get install chromium) or set CHROMIUM_PATH. HTML dashboards work without it.'
    );
  }
}

let puppeteer: Promise<typeof import('puppeteer-core')> | undefined;

/**
 * puppeteer-core, loaded once. The service loads it at start (RendererProbe.start) rather than at the
 * first PNG dashboard: a module loaded late comes from whatever is on disk then, and an upgrade in place
 * (`npm ci` in the same checkout) had made it vanish under running replicas.
 */
export function loadPuppeteer(): Promise<typeof import('puppeteer-core')> {
  if (!puppeteer) {
    const loading = import('puppeteer-core');
    puppeteer = loading;
    // A failed load is tried again next time rather than remembered forever.
    loading.catch(() => {
      if (puppeteer === loading) puppeteer = undefined;
    });
  }
  return puppeteer;
}

export async function launchChromium(executablePath: string): Promise<Browser> {
  const { launch } = await loadPuppeteer();
  return launch({
    executablePath,
    args: CHROMIUM_ARGS,
    // Debian's chromium-headless-shell (the container image's: no GTK, half the size) runs in the old
    // headless mode only; the full browser runs in the new one.
    headless: /headless[-_]shell$/.test(executablePath) ? 'shell' : true,
    pipe: true,
    // The service shuts down in order (it closes the browser); Chromium must not react to signals itself.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
}

/**
 * A new page, ready for dashboards: every request other than the inline document and data: URLs is
 * refused and logged, as are the refusals of the page's own Content-Security-Policy (which block a request
 * before the filter would see it), and script errors are logged for the template's author.
 */
export async function openRenderPage(browser: Browser, logger: JsonLogger): Promise<Page> {
  let page: Page | undefined;
  try {
    // A window each: of several tabs in one window only the front one is visible, and a hidden page gets
    // no animation frames, so its readiness and its screenshot would wait for one in vain.
    page = await browser.newPage({ type: 'window' });
    await page.setRequestInterception(true);
  } catch (error) {
    if (page) await closeSoon(page);
    throw error;
  }
  page.on('request', (request: HTTPRequest) => filter(request, logger));
  page.on('console', (message: ConsoleMessage) => consoleLine(message, logger));
  page.on('pageerror', (error: unknown) =>
    logger.emit('warn', 'dashboard script error', {
      error: (error instanceof Error ? error.message : String(error)).slice(0, 500),
    }),
  );
  return page;
}

function filter(request: HTTPRequest, logger: JsonLogger): void {
  const url = request.url();
  if (url.startsWith('data:') || url === 'about:blank') {
    request.continue().catch(() => undefined);
    return;
  }
  logger.emit('warn', 'dashboard request refused', { url: url.slice(0, 200) });
  request.abort('blockedbyclient').catch(() => undefined);
}

function consoleLine(message: ConsoleMessage, logger: JsonLogger): void {
  const text = message.text();
  if (text.startsWith(REFUSED_MARK)) {
    logger.emit('warn', 'dashboard request refused', {
      url: text.slice(REFUSED_MARK.length, REFUSED_MARK.length + 200),
    });
  } else if (message.type() === 'error') {
    logger.emit('debug', 'dashboard console error', { text: text.slice(0, 500) });
  }
}

/**
 * Closes a page, giving up after a few seconds: a page stuck in a script must not hold its slot forever
 * (Chromium ends it with its renderer when the browser is next relaunched or closed).
 */
export async function closeSoon(page: Page): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, 5000)));
  await Promise.race([page.close().catch(() => undefined), late]);
  clearTimeout(timer);
}
