import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import express from 'express';
import type { Browser, HTTPResponse, Page } from 'puppeteer-core';
import { REPO_ROOT } from './server';

/**
 * The real browser clients (../shared/clients, beside the repository) served as their READMEs say, and a
 * Chromium to drive them. Nothing on disk in the shared folder is changed.
 */

/** `../shared` beside the repository root (for a git worktree, beside its main clone). */
export function sharedDir(): string {
  const candidates = [join(REPO_ROOT, '..', 'shared')];
  try {
    const common = execFileSync('git', ['rev-parse', '--git-common-dir'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    }).trim();
    candidates.push(join(resolve(REPO_ROOT, common), '..', '..', 'shared'));
  } catch {
    // Not a git checkout: only the first candidate.
  }
  const found = candidates.find((dir) => existsSync(join(dir, 'clients')));
  if (!found) {
    throw new Error(
      `The shared folder with clients/ is missing; looked in ${candidates.join(', ')}`,
    );
  }
  return found;
}

export const STUDIO_PATH = '/squirrels-studio/';

/**
 * One static origin: Squirrels Studio v1 under `/squirrels-studio/`, the 0.4 testing UI at `/` with the
 * `hostname` constant of its index.html pointed at the service (in the served copy only).
 */
export async function serveClients(
  serviceUrl: () => string,
): Promise<{ url: string; close(): Promise<void> }> {
  const clients = join(sharedDir(), 'clients');
  const studio = join(clients, 'squirrels-studio-v1', 'dist');
  const testingUi = join(clients, 'squirrels-testing-ui-0.4', 'dist');
  const original = readFileSync(join(testingUi, 'index.html'), 'utf8');
  const HOSTNAME = /const hostname = '[^']*';/;
  if (!HOSTNAME.test(original))
    throw new Error('the hostname constant of the testing UI is missing');
  const app = express();
  app.use(STUDIO_PATH, express.static(studio));
  // The service's URL is read at request time: the service starts after this server (CORS needs our
  // origin first).
  const sendIndex = (_request: express.Request, response: express.Response) => {
    const url = serviceUrl().replace(/[^A-Za-z0-9:/._-]/g, '');
    response.type('html').send(original.replace(HOSTNAME, `const hostname = '${url}';`));
  };
  app.get('/', sendIndex);
  app.get('/index.html', sendIndex);
  app.use(express.static(testingUi, { index: false }));
  const server: Server = await new Promise((done) => {
    const listening = app.listen(0, '127.0.0.1', () => done(listening));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * puppeteer-core ships only as ES modules. Jest's module loader cannot load those before Node 24.9 and
 * stands in for `require`, `module.createRequire` and `import()` inside tests; Node's own require can
 * (require(esm), Node 20.19+). So the module is loaded by Node's loader, reached through the process object
 * of the outer realm (the `Function` behind `Buffer` is that realm's).
 */
function loadPuppeteer(): typeof import('puppeteer-core') {
  const OuterFunction = Buffer.constructor as FunctionConstructor;
  const outer = new OuterFunction('return process')() as {
    mainModule?: { constructor: { createRequire(path: string): (id: string) => unknown } };
  };
  const Module = outer.mainModule?.constructor;
  if (!Module) throw new Error("Node's module loader is not reachable from this test");
  return Module.createRequire(__filename)('puppeteer-core') as typeof import('puppeteer-core');
}

/** Debian's Chromium, headless, with a fresh profile that is removed on close. */
export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const { launch } = loadPuppeteer();
  const profile = mkdtempSync(join(tmpdir(), 'drey-chromium-'));
  const browser = await launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_FLAGS,
    userDataDir: profile,
    pipe: true,
    defaultViewport: { width: 1400, height: 1300 },
  });
  return {
    browser,
    close: async () => {
      await browser.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface ResponseRecord {
  status: number;
  method: string;
  url: string;
}

/** Every response a page receives, to check afterwards that none was a 5xx. */
export function recordResponses(page: Page): ResponseRecord[] {
  const records: ResponseRecord[] = [];
  page.on('response', (response: HTTPResponse) => {
    records.push({
      status: response.status(),
      method: response.request().method(),
      url: response.url(),
    });
  });
  return records;
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

/** The page's visible text of the elements matching a selector. */
export function textsOf(page: Page, selector: string): Promise<string[]> {
  return page.$$eval(selector, (elements) =>
    elements.map((element) => (element as unknown as { innerText: string }).innerText.trim()),
  );
}
