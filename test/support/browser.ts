import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Response } from 'playwright-core';
import { chromium } from 'playwright-core';

/**
 * Debian's Chromium for tests that drive a page as a person would (Swagger UI, the real browser clients).
 * Playwright rather than the service's own puppeteer-core: puppeteer-core ships as ES modules only, which
 * Jest's module loader cannot load before Node 24.9; playwright-core is CommonJS. The flags keep Chromium
 * from calling home on this closed network. Each launch has a fresh profile, removed on close.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A window large enough for the clients' side panels and tables without scrolling inside them. */
export const VIEWPORT = { width: 1400, height: 1300 };

/** Every response a page receives, to assert that none was a 5xx. */
export function recordResponses(page: Page): Response[] {
  const responses: Response[] = [];
  page.on('response', (response) => responses.push(response));
  return responses;
}

export function serverErrors(responses: Response[]): string[] {
  return responses
    .filter((response) => response.status() >= 500)
    .map((response) => `${response.status()} ${response.request().method()} ${response.url()}`);
}

/**
 * The Content-Security-Policy refusals a page reports on its console: Chromium writes an error for each load,
 * inline script or style, worker or connection the page's policy refuses. A page whose policy allows what it
 * needs has none.
 */
export function recordPolicyRefusals(page: Page): string[] {
  const refusals: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && message.text().includes('Content Security Policy')) {
      refusals.push(message.text());
    }
  });
  return refusals;
}

/**
 * A selector for the deepest element, `scope` itself or inside it, whose text contains `text` (case and
 * spaces as given). `scope` is a CSS selector without commas; empty for the whole page.
 */
export function withText(scope: string, text: string): string {
  const pattern = JSON.stringify(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return `${scope ? `:is(${scope}, ${scope} *)` : ''}:text-matches(${pattern})`;
}

/** The page's visible text of the elements matching a selector. */
export function textsOf(page: Page, selector: string): Promise<string[]> {
  return page.$$eval(selector, (elements) =>
    elements.map((element) => (element as unknown as { innerText: string }).innerText.trim()),
  );
}

/** Where screenshots of failed steps go: `TEST_ARTIFACTS_DIR` or a folder under the system's temp. */
export function artifactsDir(): string {
  const dir = process.env.TEST_ARTIFACTS_DIR || join(tmpdir(), 'drey-test-artifacts');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Runs a step of a browser test; on failure takes a full-page screenshot, prints its path and rethrows.
 */
export async function step<T>(page: Page, name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const file = join(artifactsDir(), `${name.replace(/[^A-Za-z0-9_-]+/g, '-')}-${Date.now()}.png`);
    await page
      .screenshot({ path: file, fullPage: true })
      .then(() => process.stderr.write(`screenshot of the failed step "${name}": ${file}\n`))
      .catch(() => undefined);
    throw error;
  }
}
