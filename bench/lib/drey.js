// @ts-check
'use strict';
// Starting a Drey server for a measurement, shared by `npm run bench` (bench/run.js) and
// bench/cpu-per-request.js: a database and a Redis prefix of its own, pinned to one CPU, waited for until
// ready, signed in as admin; stop() leaves nothing behind.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { Client } = require('pg');
const Redis = require('ioredis');
const { startPinned, waitForLine, waitUntilOk } = require('./processes');

const BASE_DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** @param {(client: import('pg').Client) => Promise<unknown>} work */
async function asAdmin(work) {
  const client = new Client({ connectionString: BASE_DATABASE_URL });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/** @param {string} prefix */
async function dropRedisKeys(prefix) {
  const redis = new Redis(REDIS_URL);
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 500 })) {
      if (keys.length > 0) await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

/** The URL in Drey's `listening` log line. @param {string} line */
function listeningUrl(line) {
  if (!line.includes('"listening"')) return undefined;
  try {
    return /** @type {{ url: string }} */ (JSON.parse(line)).url;
  } catch {
    return undefined;
  }
}

/**
 * The browser of PNG dashboards: CHROMIUM_PATH when set, else Drey's default, /usr/bin/chromium, or where
 * only Debian's chromium-headless-shell is installed (as on this machine on 2026-11-26), that: the same
 * engine in the headless mode puppeteer drives anyway.
 */
function chromiumPath() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  const shell = '/usr/bin/chromium-headless-shell';
  return !existsSync('/usr/bin/chromium') && existsSync(shell) ? shell : '/usr/bin/chromium';
}

/**
 * @typedef {{ server: import('./processes').Child, url: string, token: string, dataDir: string,
 *   logFile: string, startSeconds: number, stop: () => Promise<void> }} Drey
 */

/**
 * Starts `<root>/dist/main.js` pinned to `cpu`, on a database and a Redis prefix named `name`, waits until
 * it is ready, and signs in as admin.
 * @param {{ root: string, work: string, name: string, projectDir: string, P: string, log: string,
 *   secret: string, password: string, cpu: number, env?: Record<string, string> }} options
 * @returns {Promise<Drey>}
 */
async function startDrey({
  root,
  work,
  name,
  projectDir,
  P,
  log,
  secret,
  password,
  cpu,
  env = {},
}) {
  const databaseUrl = new URL(BASE_DATABASE_URL);
  databaseUrl.pathname = `/${name}`;
  await asAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
  const dataDir = join(work, `data-${name}`);
  const logFile = join(work, log);
  const server = startPinned(
    cpu,
    [join(root, 'dist', 'main.js')],
    {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      PROJECT_DIR: projectDir,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl.toString(),
      REDIS_URL,
      REDIS_PREFIX: name,
      JWT_SECRET: secret,
      ADMIN_PASSWORD: password,
      METRICS_PUBLIC: 'true',
      // The load comes from one address with 10 connections; the per-caller limits are not what is measured.
      CALLER_MAX_QUERIES: '10000',
      CALLER_MAX_EXPORTS: '10000',
      CALLER_MAX_RENDERS: '10000',
      CHROMIUM_PATH: chromiumPath(),
      ...env,
    },
    logFile,
  );
  const started = performance.now();
  const stop = async () => {
    await server.stop();
    await asAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    await dropRedisKeys(name);
  };
  try {
    const url = await waitForLine(logFile, listeningUrl, server, 60_000);
    await waitUntilOk(`${url}/health/ready`, server, 180_000);
    const startSeconds = (performance.now() - started) / 1000;
    const login = await fetch(`${url}${P}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'admin', password }),
    });
    if (!login.ok) throw new Error(`signing in as admin answered ${login.status}`);
    const token = /** @type {{ access_token: string }} */ (await login.json()).access_token;
    return { server, url, token, dataDir, logFile, startSeconds, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

module.exports = {
  startDrey,
  chromiumPath,
  asAdmin,
  dropRedisKeys,
  listeningUrl,
  BASE_DATABASE_URL,
  REDIS_URL,
};
