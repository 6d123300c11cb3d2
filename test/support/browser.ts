import type { Browser, Page, Response } from 'playwright-core';
import { chromium } from 'playwright-core';

/**
 * Debian's Chromium for tests that drive a page as a person would. Playwright rather than the service's own
 * puppeteer-core: puppeteer-core ships as ES modules only, which Jest's module loader cannot load before
 * Node 24.9; playwright-core is CommonJS. The flags keep Chromium from calling home on this closed network.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
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
