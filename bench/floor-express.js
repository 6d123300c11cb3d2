// @ts-check
'use strict';
// The second floor: a bare Express 5 app (ETag and x-powered-by off, as in Drey) answering the same cached
// bytes after the same HS256 check. Usage: node bench/floor-express.js <body file> [<compressed body file>
// <encoding>]; prints its URL. The compressed body is sent as bench/floor-http.js sends it.
const express = require('express');
const { createSecretKey } = require('node:crypto');
const { readFileSync } = require('node:fs');
const jwt = require('jsonwebtoken');
const { accepts } = require('./lib/encoding');

const [bodyFile, compressedFile, encoding] = process.argv.slice(2);
const body = readFileSync(/** @type {string} */ (bodyFile), 'utf8');
const compressed = compressedFile ? readFileSync(compressedFile) : undefined;
const key = createSecretKey(Buffer.from(process.env.JWT_SECRET ?? '', 'utf8'));

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/{*path}', (request, response) => {
  const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
  try {
    if (!token) throw new Error('no token');
    jwt.verify(token, key, { algorithms: ['HS256'] });
  } catch {
    response.status(401).end();
    return;
  }
  if (compressed && encoding && accepts(request.headers['accept-encoding'], encoding)) {
    response.set({ 'Content-Encoding': encoding, Vary: 'Accept-Encoding' });
    response.type('application/json').send(compressed);
    return;
  }
  response.type('application/json').send(body);
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
