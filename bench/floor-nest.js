// @ts-check
'use strict';
// A third reference: a bare NestJS 12 app on Express (ETag off) answering the same cached bytes, as a
// string with a JSON type, after the same HS256 check. What Nest itself costs, before anything Drey adds.
// Usage: node bench/floor-nest.js <body file>; prints its URL.
require('reflect-metadata');
const {
  Controller,
  Get,
  Header,
  Headers,
  Module,
  UnauthorizedException,
} = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { createSecretKey } = require('node:crypto');
const { readFileSync } = require('node:fs');
const jwt = require('jsonwebtoken');

const body = readFileSync(/** @type {string} */ (process.argv[2]), 'utf8');
const key = createSecretKey(Buffer.from(process.env.JWT_SECRET ?? '', 'utf8'));

class CachedController {
  /** @param {string | undefined} authorization */
  get(authorization) {
    const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
    try {
      if (!token) throw new Error('no token');
      jwt.verify(token, key, { algorithms: ['HS256'] });
    } catch {
      throw new UnauthorizedException();
    }
    return body;
  }
}
// Decorators applied as functions: this file is plain JavaScript.
const get = /** @type {PropertyDescriptor} */ (
  Object.getOwnPropertyDescriptor(CachedController.prototype, 'get')
);
Headers('authorization')(CachedController.prototype, 'get', 0);
Header('Content-Type', 'application/json; charset=utf-8')(CachedController.prototype, 'get', get);
Get('{*path}')(CachedController.prototype, 'get', get);
Reflect.defineMetadata('design:paramtypes', [String], CachedController.prototype, 'get');
Controller()(CachedController);

class AppModule {}
Module({ controllers: [CachedController] })(AppModule);

async function main() {
  const app = await NestFactory.create(AppModule, { logger: false });
  const http = app.getHttpAdapter().getInstance();
  http.disable('x-powered-by');
  http.set('etag', false);
  await app.listen(0, '127.0.0.1');
  process.stdout.write(`${(await app.getUrl()).replace('[::1]', '127.0.0.1')}\n`);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}
void main();
