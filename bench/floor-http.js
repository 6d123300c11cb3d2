// @ts-check
'use strict';
// The floor of the benchmark: a bare node:http server answering the same cached bytes as Drey after the
// same HS256 check of the bearer token (jsonwebtoken, as Drey uses through @nestjs/jwt, with a KeyObject).
// Usage: node bench/floor-http.js <body file> [<compressed body file> <encoding>] (JWT_SECRET in the
// environment); prints its URL. With a compressed body, a request whose Accept-Encoding names its encoding
// gets those bytes, compressed beforehand, as a cache that keeps bodies compressed would send them.
const http = require('node:http');
const { createSecretKey } = require('node:crypto');
const { readFileSync } = require('node:fs');
const jwt = require('jsonwebtoken');
const { accepts } = require('./lib/encoding');

const [bodyFile, compressedFile, encoding] = process.argv.slice(2);
const body = readFileSync(/** @type {string} */ (bodyFile));
const compressed = compressedFile ? readFileSync(compressedFile) : undefined;
const key = createSecretKey(Buffer.from(process.env.JWT_SECRET ?? '', 'utf8'));

const server = http.createServer((request, response) => {
  const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
  try {
    if (!token) throw new Error('no token');
    jwt.verify(token, key, { algorithms: ['HS256'] });
  } catch {
    response.writeHead(401).end();
    return;
  }
  if (compressed && encoding && accepts(request.headers['accept-encoding'], encoding)) {
    response.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Encoding': encoding,
      Vary: 'Accept-Encoding',
      'Content-Length': compressed.length,
    });
    response.end(compressed);
    return;
  }
  response.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': body.length,
  });
  response.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
