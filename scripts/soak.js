#!/usr/bin/env node
// `npm run soak`: mixed traffic over every endpoint kind for SOAK_SECONDS (default 600) from SOAK_CONCURRENCY
// (default 16) loops on this machine's loopback, against a freshly started server on the Postgres and Redis
// at DATABASE_URL / REDIS_URL. Reports counts by status, latency percentiles per kind, the server's memory
// after warm-up and at the end, p99 and RSS per minute, and every 5xx. Exits 1 on a 5xx other than a
// documented 503, on memory at the end more than 20% above the memory after warm-up, on the last minute's RSS
// 20% (or p99 three times) above the second's, or on a missing audit row for a login or admin action.
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');

const SECONDS = Number(process.env.SOAK_SECONDS || 600);
const WARMUP_SECONDS = Math.min(60, Math.max(5, Math.round(SECONDS / 10)));
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY || 16);
const BASE_DB = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const ADMIN_PASSWORD = 'soak-admin-password';
const P = '/api/service-v0/project/expenses/v1';
const L = '/service-v0/expenses/v1';

function rssKb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
}

async function admin(sql) {
  const client = new Client({ connectionString: BASE_DB });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main() {
  const dbName = `drey_soak_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(BASE_DB);
  dbUrl.pathname = `/${dbName}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'drey-soak-'));
  const env = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL,
    REDIS_PREFIX: dbName,
    DATA_DIR: dataDir,
    JWT_SECRET: 'soak-secret-soak-secret-soak-secret-0123',
    ADMIN_PASSWORD,
    LOG_LEVEL: 'info',
    LOGIN_MAX_FAILURES: '1000',
    LOGIN_MAX_FAILURES_PER_ADDRESS: '100000',
    // Every soak client is one address; the per-caller limits are not what is soaked.
    CALLER_MAX_QUERIES: '10000',
    CALLER_MAX_EXPORTS: '10000',
    CALLER_MAX_RENDERS: '10000',
  };
  const server = spawn(process.execPath, [join(__dirname, '..', 'dist', 'main.js')], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let url = '';
  const serverLines = [];
  server.stdout.setEncoding('utf8').on('data', (chunk) => {
    for (const line of chunk.split('\n')) {
      if (!line) continue;
      serverLines.push(line);
      if (serverLines.length > 1000) serverLines.shift();
      const match = /"msg":"listening","url":"([^"]+)"/.exec(line);
      if (match) url = match[1];
    }
  });
  const stop = async () => {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 600 && !url; i += 1) await new Promise((r) => setTimeout(r, 100));
    if (!url) throw new Error('the server did not start');
    for (let i = 0; i < 600; i += 1) {
      const ready = await fetch(`${url}/health/ready`).catch(() => undefined);
      if (ready?.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const call = async (method, path, { token, json, form } = {}) => {
      const headers = {};
      if (token) headers.Authorization = `Bearer ${token}`;
      let body;
      if (json !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(json);
      } else if (form) {
        headers['Content-Type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(form).toString();
      }
      const response = await fetch(`${url}${path}`, { method, headers, body });
      const text = await response.text();
      return { status: response.status, text };
    };
    const login = async (username, password) =>
      JSON.parse((await call('POST', `${P}/login`, { form: { username, password } })).text).access_token;
    const adminToken = await login('admin', ADMIN_PASSWORD);
    await call('POST', `${P}/users`, { token: adminToken, json: { username: 'soak_manager', password: 'pw-manager', role: 'manager' } });
    await call('POST', `${P}/users`, { token: adminToken, json: { username: 'soak_employee', password: 'pw-employee' } });
    const manager = await login('soak_manager', 'pw-manager');
    const employee = await login('soak_employee', 'pw-employee');

    const expected = { logins: 3, adminActions: 2 };
    const pick = (list) => list[Math.floor(Math.random() * list.length)];
    const months = ['01', '02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12'];
    // Each kind: a weight and a request; `ok` lists the statuses that are correct answers.
    const kinds = [
      { name: 'public dataset', weight: 20, ok: [200], run: () => call('GET', `${P}/datasets/expenses_by_month/results?start_date=2024-${pick(months)}-01&x_orientation=${pick(['records', 'rows', 'columns'])}`) },
      { name: 'protected dataset', weight: 15, ok: [200], run: () => call('POST', `${P}/datasets/expenses_grouped/results`, { token: pick([manager, employee]), json: { group_by: pick(['day', 'month', 'cat', 'subcat']), category: [pick(['0', '1', '2', '3', '4'])], x_limit: 50 } }) },
      { name: 'private dataset', weight: 5, ok: [200, 403], run: () => call('GET', `${P}/datasets/expense_transactions/results?x_limit=20`, { token: pick([adminToken, employee]) }) },
      { name: 'parameters cascade', weight: 10, ok: [200], run: () => call('GET', `${P}/datasets/expenses_grouped/parameters?category=${pick(['0', '1', '2'])}`, { token: employee }) },
      { name: 'catalog', weight: 8, ok: [200], run: () => call('GET', `${P}/data-catalog`, { token: pick([undefined, employee, adminToken]) }) },
      { name: 'legacy', weight: 8, ok: [200], run: () => call('GET', pick([`${L}/data-catalog`, `${L}/dataset/expenses-by-month`, `${L}/dataset/expenses_by_month/parameters?start-date=2024-02-01`])) },
      { name: 'invalid selection', weight: 6, ok: [400], run: () => call('GET', `${P}/datasets/expenses_by_month/results?${pick(['min_filter=15', 'start_date=nope', 'x_limit=-1', 'x_orientation=up'])}`) },
      { name: 'unauthorised', weight: 5, ok: [401, 403], run: () => call('GET', pick([`${P}/datasets/expenses_grouped/results`, `${P}/me`, `${P}/users`]), { token: pick([undefined, 'garbage']) }) },
      { name: 'not found', weight: 3, ok: [404], run: () => call('GET', pick([`${P}/datasets/nope/results`, '/api/service-v0/project/other/v1', `${L}/dashboard/nope`])) },
      { name: 'me and tokens', weight: 5, ok: [200], run: () => call('GET', pick([`${P}/me`, `${P}/tokens`, `${P}/users`]), { token: employee }) },
      { name: 'dashboard html', weight: 3, ok: [200], run: () => call('GET', `${P}/dashboards/expenses_report/results?start_date=2024-${pick(months)}-01`) },
      { name: 'query-models', weight: 3, ok: [200, 400], run: () => { expected.adminActions += 1; return call('POST', `${P}/query-models`, { token: adminToken, json: { sql_query: pick(['SELECT count(*) FROM expenses', 'SELECT * FROM expenses_by_month', "COPY expenses TO '/tmp/x'"]), x_limit: 10 } }); } },
      { name: 'login', weight: 3, ok: [200, 401], run: () => { expected.logins += 1; return call('POST', `${P}/login`, { form: { username: 'soak_employee', password: pick(['pw-employee', 'wrong']) } }); } },
      { name: 'named token', weight: 1, ok: [200], run: async () => {
        expected.adminActions += 2;
        const created = await call('POST', `${P}/tokens`, { token: adminToken, json: { title: 'soak', expiry_minutes: 5 } });
        const id = JSON.parse(Buffer.from(JSON.parse(created.text).access_token.split('.')[1], 'base64url')).jti;
        return call('DELETE', `${P}/tokens/${id}`, { token: adminToken });
      } },
      { name: 'health and metrics', weight: 2, ok: [200], run: () => call('GET', pick(['/health/live', '/health/ready', '/metrics']), { token: adminToken }) },
    ];
    const total = kinds.reduce((sum, kind) => sum + kind.weight, 0);
    const choose = () => {
      let r = Math.random() * total;
      for (const kind of kinds) if ((r -= kind.weight) < 0) return kind;
      return kinds[0];
    };
    const stats = new Map(kinds.map((kind) => [kind.name, { statuses: {}, latencies: [], wrong: 0 }]));
    const fiveHundreds = [];
    let warmRss = 0;
    const started = Date.now();
    const end = started + SECONDS * 1000;
    const warmupTimer = setTimeout(() => {
      warmRss = rssKb(server.pid);
      console.log(`after warm-up (${WARMUP_SECONDS} s): RSS ${(warmRss / 1024).toFixed(1)} MB`);
    }, WARMUP_SECONDS * 1000);
    const startRss = rssKb(server.pid);
    // Per minute: every latency and the server's RSS at its end, to show the tail and memory stay flat.
    const minutes = [];
    // By the time a request started, so that the last minute does not spill into a sliver after the end.
    const minuteOf = (at) => {
      const index = Math.floor((at - started) / 60_000);
      while (minutes.length <= index) minutes.push({ latencies: [], rssKb: 0 });
      return minutes[index];
    };
    const sampler = setInterval(() => {
      const minute = minutes[Math.floor((Date.now() - started) / 60_000) - 1];
      if (minute && !minute.rssKb) minute.rssKb = rssKb(server.pid);
    }, 1000);
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < end) {
          const kind = choose();
          const t0 = performance.now();
          const startedAt = Date.now();
          let status = 0;
          try {
            status = (await kind.run()).status;
          } catch (error) {
            status = -1;
            fiveHundreds.push({ kind: kind.name, error: String(error) });
          }
          const stat = stats.get(kind.name);
          stat.latencies.push(performance.now() - t0);
          minuteOf(startedAt).latencies.push(performance.now() - t0);
          stat.statuses[status] = (stat.statuses[status] || 0) + 1;
          if (!kind.ok.includes(status)) stat.wrong += 1;
          if (status >= 500 && status !== 503) fiveHundreds.push({ kind: kind.name, status });
        }
      }),
    );
    clearTimeout(warmupTimer);
    clearInterval(sampler);
    const endRss = rssKb(server.pid);
    for (const minute of minutes) if (!minute.rssKb) minute.rssKb = endRss;
    if (!warmRss) warmRss = startRss;
    const audit = await new Client({ connectionString: dbUrl.toString() });
    await audit.connect();
    const rows = (await audit.query(`SELECT action, count(*)::int AS n FROM audit_events GROUP BY action`)).rows;
    await audit.end();
    const audited = Object.fromEntries(rows.map((row) => [row.action, row.n]));
    const adminAudited = (audited['query_models'] || 0) + (audited['token.create'] || 0) + (audited['token.revoke'] || 0) + (audited['user.create'] || 0);

    console.log(`\nSoak: ${SECONDS} s, ${CONCURRENCY} loops\n`);
    console.log('| kind | requests | statuses | unexpected | p50 ms | p95 ms | p99 ms |');
    console.log('|---|---:|---|---:|---:|---:|---:|');
    let requests = 0;
    for (const [name, stat] of stats) {
      const sorted = stat.latencies.sort((a, b) => a - b);
      requests += sorted.length;
      const statuses = Object.entries(stat.statuses).map(([s, n]) => `${s}: ${n}`).join(', ');
      console.log(`| ${name} | ${sorted.length} | ${statuses} | ${stat.wrong} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 95).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} |`);
    }
    console.log('\n| minute | requests | p50 ms | p99 ms | RSS MB at its end |');
    console.log('|---:|---:|---:|---:|---:|');
    const full = minutes.filter((minute) => minute.latencies.length > 0);
    for (const [index, minute] of minutes.entries()) {
      if (minute.latencies.length === 0) continue;
      const sorted = minute.latencies.sort((a, b) => a - b);
      minute.p99 = percentile(sorted, 99);
      console.log(`| ${index + 1} | ${sorted.length} | ${percentile(sorted, 50).toFixed(1)} | ${minute.p99.toFixed(1)} | ${(minute.rssKb / 1024).toFixed(1)} |`);
    }
    const growth = (endRss - warmRss) / warmRss;
    console.log(`\nrequests: ${requests} (${(requests / SECONDS).toFixed(0)}/s)`);
    console.log(`memory: start ${(startRss / 1024).toFixed(1)} MB, after warm-up ${(warmRss / 1024).toFixed(1)} MB, end ${(endRss / 1024).toFixed(1)} MB (${(growth * 100).toFixed(1)}% after warm-up)`);
    console.log(`5xx other than 503: ${fiveHundreds.length}`);
    for (const item of fiveHundreds.slice(0, 20)) console.log('  ', JSON.stringify(item));
    console.log(`audit: logins ${audited['login'] || 0} of ${expected.logins}; admin actions ${adminAudited} of ${expected.adminActions}`);
    const failures = [];
    if (fiveHundreds.length > 0) failures.push('5xx answers');
    if (growth > 0.2) failures.push('memory grew more than 20% after warm-up');
    // Flat from the second minute to the last: the tail may wander (a shared machine), not climb.
    if (full.length >= 3) {
      const [second, last] = [full[1], full[full.length - 1]];
      if (last.rssKb > second.rssKb * 1.2) failures.push('RSS of the last minute more than 20% above the second');
      if (last.p99 > second.p99 * 3) failures.push('p99 of the last minute more than 3 times the second');
    }
    if ((audited['login'] || 0) < expected.logins) failures.push('missing audit rows for logins');
    if (adminAudited < expected.adminActions) failures.push('missing audit rows for admin actions');
    const unexpected = [...stats.values()].reduce((sum, stat) => sum + stat.wrong, 0);
    if (unexpected > 0) failures.push(`${unexpected} unexpected statuses`);
    console.log(failures.length ? `\nFAILED: ${failures.join('; ')}` : '\nPASSED');
    process.exitCode = failures.length ? 1 : 0;
  } finally {
    await stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
