import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './services';

/** A self-signed certificate for 127.0.0.1, made by openssl, and the file it is in (its own CA). */
export function loopbackCertificate(): {
  cert: string;
  key: string;
  certFile: string;
  remove(): void;
} {
  const dir = tempDir('drey-https-');
  const certFile = join(dir.path, 'cert.pem');
  const keyFile = join(dir.path, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return {
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
    certFile,
    remove: () => dir.remove(),
  };
}

/**
 * An HTTPS server on 127.0.0.1 that answers one JSON document at `path` (a client's metadata document,
 * CIMD), counting the times it was fetched. `document` is given the document's own URL.
 */
export async function serveJsonDocument(
  tls: { cert: string; key: string },
  path: string,
  document: (url: string) => unknown,
): Promise<{ url: string; fetched: () => number; close(): Promise<void> }> {
  let count = 0;
  let url = '';
  const server: Server = createServer(tls, (request, response) => {
    if (request.url !== path) {
      response.writeHead(404).end();
      return;
    }
    count++;
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
    response.end(JSON.stringify(document(url)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return {
    url,
    fetched: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
