#!/usr/bin/env node
// Before the tests: are the Postgres and Redis they use reachable? Says which one is not, and how to fix it.
const { Client } = require('pg');
const Redis = require('ioredis');

const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

async function checkPostgres() {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function checkRedis() {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 3000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } finally {
    redis.disconnect();
  }
}

function hide(url) {
  return url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');
}

(async () => {
  const failures = [];
  await checkPostgres().catch((e) =>
    failures.push(`Postgres at ${hide(databaseUrl)} (DATABASE_URL) is not reachable: ${e.message}`),
  );
  await checkRedis().catch((e) =>
    failures.push(`Redis at ${hide(redisUrl)} (REDIS_URL) is not reachable: ${e.message}`),
  );
  if (failures.length) {
    for (const f of failures) console.error(f);
    console.error(
      'The tests need a real Postgres and Redis: start them, or point DATABASE_URL and REDIS_URL at yours.',
    );
    process.exit(1);
  }
})();
