import { existsSync, readFileSync } from 'node:fs';
import { Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import { REPO_ROOT } from './server';

/**
 * The real browser clients (../shared/clients, beside the repository) served as their READMEs say, for
 * ./browser.ts's Chromium to drive. Nothing on disk in the shared folder is changed.
 */

/** `../shared` beside the repository root (a worktree's own `../shared` too), as CI lays it out. */
export function sharedDir(): string {
  const dir = join(REPO_ROOT, '..', 'shared');
  if (!existsSync(join(dir, 'clients'))) {
    throw new Error(`The shared folder (clients/ and data/) is missing: expected it at ${dir}`);
  }
  return dir;
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
