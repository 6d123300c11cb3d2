#!/usr/bin/env node
'use strict';
// What checking a token's record costs the process that asks, per round trip: the Postgres query every
// request's turn ran before (TokenLookup's prepared statement, joined with the user) against the Redis GET of
// the token records' epoch that replaces it while records are kept (src/database/token-records/token-records.ts).
//   node bench/token-lookup-cost.js [calls per round, default 5000] [rounds, default 3]
// CPU time of this process (user + system) per call, one call at a time, alternating in rounds; a database of
// its own (dropped after) and a Redis key of its own.
const { Pool } = require('pg');
const Redis = require('ioredis');
const { asAdmin, BASE_DATABASE_URL, REDIS_URL } = require('./lib/drey');

const LOOKUP = `SELECT t.id AS token_id, u.id AS user_id, u.username, u.is_admin, u.fields, t.expires_at
    FROM access_tokens t JOIN users u ON u.id = t.user_id
   WHERE t.id = ANY($1::uuid[]) AND (t.expires_at IS NULL OR t.expires_at > now())`;
const USER = '11111111-1111-4111-8111-111111111111';
const TOKEN = '22222222-2222-4222-8222-222222222222';

const calls = Number(process.argv[2] ?? 5000);
const rounds = Number(process.argv[3] ?? 3);
const name = `token_lookup_cost_${process.pid}`;

const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function perCall(work) {
  const start = cpu();
  for (let i = 0; i < calls; i++) await work();
  return (cpu() - start) / calls;
}

async function main() {
  await asAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(BASE_DATABASE_URL);
  url.pathname = `/${name}`;
  const pool = new Pool({ connectionString: url.toString(), max: 1 });
  const redis = new Redis(REDIS_URL);
  const key = `${name}:token-records`;
  try {
    await pool.query(`CREATE TABLE users (id uuid PRIMARY KEY, username text, is_admin boolean, fields jsonb);
      CREATE TABLE access_tokens (id uuid PRIMARY KEY, user_id uuid REFERENCES users ON DELETE CASCADE,
        expires_at timestamptz);
      INSERT INTO users VALUES ('${USER}', 'admin', true, '{"role": "manager"}');
      INSERT INTO access_tokens VALUES ('${TOKEN}', '${USER}', now() + interval '1 day');`);
    await redis.set(key, 'an epoch');
    const postgres = () => pool.query({ name: 'lookup', text: LOOKUP, values: [[TOKEN]] });
    const get = () => redis.get(key);
    await perCall(postgres);
    await perCall(get);
    for (let round = 1; round <= rounds; round++) {
      const first = round % 2 ? 'postgres' : 'redis';
      const figures = {};
      for (const side of first === 'postgres' ? ['postgres', 'redis'] : ['redis', 'postgres']) {
        figures[side] = await perCall(side === 'postgres' ? postgres : get);
      }
      console.log(
        `round ${round}: Postgres lookup ${figures.postgres.toFixed(1)} µs of CPU a call, ` +
          `Redis GET ${figures.redis.toFixed(1)} µs (${(figures.redis / figures.postgres).toFixed(2)}x)`,
      );
    }
  } finally {
    await pool.end();
    await redis.del(key);
    redis.disconnect();
    await asAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
