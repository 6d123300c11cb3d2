#!/usr/bin/env node
// `npm run faults`: the fault drill. Two Drey processes (replicas) on a Postgres and a Redis of the drill's own
// (started here on free ports, so the machine's servers and other tests are untouched), with DATA_DIRs on
// small tmpfs mounts, serve mixed traffic (logins, catalog, cached and uncached results, exports, PNG
// renders, named tokens created and revoked, users created and edited, builds) from FAULTS_CONCURRENCY
// loops while the drill, one after the other: stops Postgres for 3 s, stops and starts Redis (revoking tokens on
// one replica and trying them at once on the other meanwhile), kills each replica's Chromium once a PNG
// render of its own has started it, fills the data disks during a build, SIGKILLs the replica that runs a
// build and then the other mid-request. No fault depends on what traffic reached a replica first; a fault
// that cannot be made here (no Chromium) is reported as skipped, with why.
// Afterwards it checks that nothing answered was lost: every token and user answered 2xx is there with its
// audit row, every revoked token stays refused, the previous environment served through the failed build,
// and during the faults answers were 2xx/4xx or 503 with Retry-After, never a hang or another 5xx.
// Prints the counts; exits 1 on any loss. Needs root (tmpfs, running Postgres as its user) and
// /usr/lib/postgresql/*/bin, redis-server and Chromium (CHROMIUM_PATH).
'use strict';
const { execFile, execFileSync, spawn } = require('node:child_process');
const { promisify } = require('node:util');
const {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statfsSync,
  writeFileSync,
} = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');

const CONCURRENCY = Number(process.env.FAULTS_CONCURRENCY || 8);
const REQUEST_TIMEOUT_MS = 30_000;
const ADMIN_PASSWORD = 'faults-admin-password';
const P = '/api/service-v0/project/expenses/v1';
const ROOT = join(__dirname, '..');
const PG_BIN = join('/usr/lib/postgresql', readdirSync('/usr/lib/postgresql').sort().pop(), 'bin');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (...args) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...args);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The Chromium a replica launched: its direct child named chrom* (Debian's wrapper script execs the binary). */
function chromiumOf(parent) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [, comm, rest] =
        /^\d+ \((.*)\) (.*)$/s.exec(readFileSync(`/proc/${entry}/stat`, 'utf8')) ?? [];
      if (Number(rest?.split(' ')[1]) === parent && comm?.startsWith('chrom')) return Number(entry);
    } catch {
      // ended while we looked
    }
  }
  return undefined;
}

/** A Postgres cluster of the drill's own, run as the postgres user (initdb refuses root). */
async function startPostgres(work) {
  const dir = join(work, 'pg');
  mkdirSync(dir);
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
  chownSync(dir, uid, gid);
  chmodSync(work, 0o755);
  const port = await freePort();
  // Asynchronous, so that traffic goes on while Postgres restarts; its output goes to a log file (a pipe would
  // be held open by the server and never end).
  const as = (args) => promisify(execFile)('runuser', ['-u', 'postgres', '--', ...args]);
  await as([join(PG_BIN, 'initdb'), '-D', dir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const pgctl = (action, extra = []) =>
    as([
      join(PG_BIN, 'pg_ctl'),
      '-D',
      dir,
      '-w',
      '-t',
      '60',
      '-l',
      join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      ...extra,
      action,
    ]);
  await pgctl('start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => pgctl('start'),
    stop: (mode = 'immediate') => pgctl('stop', ['-m', mode]),
  };
}

/** A Redis of the drill's own, in the foreground so it can be stopped and started. */
async function startRedis() {
  const port = await freePort();
  let child;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i += 1) {
      try {
        execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'pipe' });
        return;
      } catch {
        await sleep(50);
      }
    }
    throw new Error('redis did not start');
  };
  const stop = () =>
    new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGKILL');
    });
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop };
}

function mountTmpfs(dir, megabytes) {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir]);
  return () => execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
}

/** One Drey process; `start` starts it (again) with the same environment, its output appended to `logFile`. */
function replica(name, env, logFile) {
  // `seen`: lines read so far, `lines`: the last 5,000 of them.
  const state = { name, url: '', child: undefined, lines: [], seen: 0 };
  state.linesSince = (count) =>
    state.lines.slice(Math.max(0, state.lines.length - (state.seen - count)));
  state.start = async () => {
    state.url = '';
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'main.js')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    state.child = child;
    const file = createWriteStream(logFile, { flags: 'a' });
    child.stderr.pipe(file);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      file.write(chunk);
      for (const line of chunk.split('\n')) {
        if (!line) continue;
        state.lines.push(line);
        state.seen += 1;
        if (state.lines.length > 5000) state.lines.shift();
        const match = /"msg":"listening","url":"([^"]+)"/.exec(line);
        if (match) state.url = match[1];
      }
    });
    for (let i = 0; i < 600 && !state.url; i += 1) await sleep(100);
    if (!state.url) throw new Error(`${name} did not start`);
    for (let i = 0; i < 600; i += 1) {
      const ready = await fetch(`${state.url}/health/ready`).catch(() => undefined);
      if (ready?.status === 200) return;
      await sleep(100);
    }
    throw new Error(`${name} did not become ready`);
  };
  state.kill = (signal) =>
    new Promise((resolve) => {
      if (!state.child || state.child.exitCode !== null) return resolve();
      state.child.once('exit', resolve);
      state.child.kill(signal);
    });
  return state;
}

/** The replicas' logs are kept after the drill (the drill's other files are not). */
const LOGS = process.env.FAULTS_LOG_DIR || join(tmpdir(), 'drey-faults-logs');

async function main() {
  rmSync(LOGS, { recursive: true, force: true });
  mkdirSync(LOGS, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'drey-faults-'));
  const cleanups = [];
  const results = {
    requests: 0,
    byStatus: {},
    byKind: {},
    hangs: [],
    wrong: [],
    noRetryAfter: 0,
    refusedReasons: {},
  };
  const writes = { tokens: [], revoked: [], users: [], edits: [] };
  try {
    log('starting Postgres and Redis of the drill');
    const pg = await startPostgres(work);
    cleanups.push(() => pg.stop());
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const replicas = [];
    for (const name of ['a', 'b']) {
      const dataDir = join(work, `data-${name}`);
      cleanups.push(mountTmpfs(dataDir, 96));
      replicas.push(
        replica(
          name,
          {
            PATH: process.env.PATH,
            NODE_ENV: 'production',
            HOST: '127.0.0.1',
            PORT: '0',
            ENV_FILE: '',
            DATABASE_URL: pg.url,
            REDIS_URL: redis.url,
            REDIS_PREFIX: 'faults',
            DATA_DIR: dataDir,
            JWT_SECRET: 'faults-secret-faults-secret-faults-0123',
            ADMIN_PASSWORD,
            CHROMIUM_PATH: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
            LOGIN_MAX_FAILURES: '1000',
            LOGIN_MAX_FAILURES_PER_ADDRESS: '100000',
            CALLER_MAX_QUERIES: '10000',
            CALLER_MAX_EXPORTS: '10000',
            CALLER_MAX_RENDERS: '10000',
          },
          join(LOGS, `replica-${name}.log`),
        ),
      );
    }
    for (const r of replicas) {
      await r.start();
      cleanups.push(() => r.kill('SIGKILL'));
    }
    log('replicas ready:', replicas.map((r) => r.url).join(' '));

    let turn = 0;
    const target = () => replicas[turn++ % replicas.length];
    const call = async (kind, method, path, { token, json, form, accept, on } = {}) => {
      const r = on ?? target();
      const headers = {};
      if (token) headers.Authorization = `Bearer ${token}`;
      if (accept) headers.Accept = accept;
      let body;
      if (json !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(json);
      } else if (form) {
        headers['Content-Type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(form).toString();
      }
      let status;
      let text = '';
      let retryAfter = null;
      try {
        if (!r.url) throw Object.assign(new Error('replica down'), { down: true });
        const send = () =>
          fetch(`${r.url}${path}`, {
            method,
            headers,
            body,
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
        // A GET on a kept-alive connection the server closed at that moment is sent again, as clients and
        // load balancers do; a write is not (its retry could not tell a lost answer from a lost request).
        const response = await send().catch((error) => {
          if (method !== 'GET' || error.name === 'TimeoutError' || !r.url) throw error;
          return send();
        });
        status = response.status;
        retryAfter = response.headers.get('retry-after');
        text = Buffer.from(await response.arrayBuffer()).toString('utf8', 0, 4096);
      } catch (error) {
        if (error.name === 'TimeoutError') {
          status = 'hang';
          results.hangs.push(`${kind} ${method} ${path}`);
        } else {
          // A connection to a replica that is being killed or restarted: what a load balancer retries.
          status = 'refused';
          const reason = String(error.cause?.code ?? error.cause?.message ?? error.message);
          results.refusedReasons[reason] = (results.refusedReasons[reason] || 0) + 1;
        }
      }
      results.requests += 1;
      results.byStatus[status] = (results.byStatus[status] || 0) + 1;
      const k = (results.byKind[kind] ??= {});
      k[status] = (k[status] || 0) + 1;
      // A build that fails (a full disk, its replica killed) answers 500 build_failed, as documented; no other 5xx is right, and
      // no answer names a path of the server.
      const documented =
        kind.startsWith('build') && status === 500 && text.includes('"build_failed"');
      if (/\/tmp\/|drey-faults/.test(text))
        results.wrong.push(
          `${kind} ${method} ${path} -> ${status} names a path: ${text.slice(0, 200)}`,
        );
      else if (typeof status === 'number' && status >= 500 && status !== 503 && !documented)
        results.wrong.push(`${kind} ${method} ${path} -> ${status} ${text.slice(0, 200)}`);
      // A PNG without Chromium is documented without Retry-After: retrying cannot help (docs/api.md).
      if (status === 503 && !retryAfter && !text.includes('"renderer_unavailable"'))
        results.noRetryAfter += 1;
      return { status, text };
    };
    const login = async (username, password) => {
      for (;;) {
        const reply = await call('login', 'POST', `${P}/login`, { form: { username, password } });
        if (reply.status === 200) return JSON.parse(reply.text).access_token;
        await sleep(200);
      }
    };
    const admin = await login('admin', ADMIN_PASSWORD);

    let stop = false;
    let userSerial = 0;
    const pick = (list) => list[Math.floor(Math.random() * list.length)];
    const kinds = [
      () => call('catalog', 'GET', `${P}/data-catalog`, { token: pick([undefined, admin]) }),
      () => call('cached result', 'GET', `${P}/datasets/expenses_by_month/results`),
      () =>
        call(
          'uncached result',
          'GET',
          `${P}/datasets/expenses_by_month/results?min_filter=${10 * Math.floor(Math.random() * 30)}&max_filter=${300 - 10 * Math.floor(Math.random() * 10)}`,
        ),
      () =>
        call('export', 'GET', `${P}/datasets/expense_transactions/results`, {
          token: admin,
          accept: 'text/csv',
        }),
      () =>
        call('png render', 'GET', `${P}/dashboards/expenses_dashboard/results`, { token: admin }),
      async () => {
        const r = target();
        const created = await call('token create', 'POST', `${P}/tokens`, {
          token: admin,
          json: { title: 'drill' },
          on: r,
        });
        if (created.status !== 200) return;
        const token = JSON.parse(created.text).access_token;
        const id = JSON.parse(Buffer.from(token.split('.')[1], 'base64url')).jti;
        writes.tokens.push({ id, token });
        if (Math.random() < 0.5) {
          const revoked = await call('token revoke', 'DELETE', `${P}/tokens/${id}`, {
            token: admin,
          });
          if (revoked.status === 200) writes.revoked.push({ id, token });
        }
      },
      async () => {
        const username = `drill_${process.pid}_${userSerial++}`;
        const created = await call('user create', 'POST', `${P}/users`, {
          token: admin,
          json: { username, password: `${username}-pw` },
        });
        if (created.status !== 200) return;
        writes.users.push(username);
        const edited = await call('user edit', 'PUT', `${P}/users/${username}`, {
          token: admin,
          json: { role: 'manager' },
        });
        if (edited.status === 200) writes.edits.push(username);
      },
      () =>
        call('login', 'POST', `${P}/login`, {
          form: { username: 'admin', password: pick([ADMIN_PASSWORD, 'wrong']) },
        }),
    ];
    const loops = Array.from({ length: CONCURRENCY }, async () => {
      while (!stop) await pick(kinds)();
    });

    const faults = [];
    /** `action` answers what happened (the fault's outcome), or a reason it was skipped (`{ skipped }`). */
    const fault = async (name, action) => {
      log('fault:', name);
      const before = results.requests;
      const outcome = (await action()) ?? {};
      faults.push({ name, requestsDuring: results.requests - before, ...outcome });
      log(outcome.skipped ? `skipped: ${outcome.skipped}` : `done: ${outcome.outcome ?? ''}`);
      await sleep(3000);
    };
    /**
     * Revocations made on one replica and tried at once on the other, which has just used the token (so it
     * keeps its record): the other must refuse it at once, Redis up or not.
     */
    const probe = { revoked: 0, refusedAtOnce: 0, stale: [], notDone: {} };
    const revocationProbe = async (until) => {
      for (let i = 0; !until(); i += 1) {
        const [maker, other] = i % 2 === 0 ? replicas : [replicas[1], replicas[0]];
        const created = await call('probe token create', 'POST', `${P}/tokens`, {
          token: admin,
          json: { title: 'probe' },
          on: maker,
        });
        if (created.status !== 200) {
          probe.notDone[`create ${created.status}`] =
            (probe.notDone[`create ${created.status}`] || 0) + 1;
          await sleep(100);
          continue;
        }
        const token = JSON.parse(created.text).access_token;
        const id = JSON.parse(Buffer.from(token.split('.')[1], 'base64url')).jti;
        writes.tokens.push({ id, token });
        await call('probe me', 'GET', `${P}/me`, { token, on: other });
        const revoked = await call('probe token revoke', 'DELETE', `${P}/tokens/${id}`, {
          token: admin,
          on: maker,
        });
        if (revoked.status !== 200) {
          probe.notDone[`revoke ${revoked.status}`] =
            (probe.notDone[`revoke ${revoked.status}`] || 0) + 1;
          continue;
        }
        writes.revoked.push({ id, token });
        probe.revoked += 1;
        const seen = await call('probe me after revoke', 'GET', `${P}/me`, { token, on: other });
        if (seen.status === 401) probe.refusedAtOnce += 1;
        else
          probe.stale.push(`${id} revoked on ${maker.name}, ${other.name} answered ${seen.status}`);
      }
    };
    await sleep(3000);
    await fault(
      'Postgres stopped for 3 s (fast: every session terminated), then started',
      async () => {
        await pg.stop('fast');
        await sleep(3000);
        await pg.start();
        return { outcome: 'stopped and started' };
      },
    );
    await fault('Redis stopped for 5 s', async () => {
      await redis.stop();
      const stoppedAt = Date.now();
      // Revocations while Redis is down, then for 5 s after it is back (the replicas reconnect at
      // different moments: one may read the epoch while the other cannot write it yet).
      let back = false;
      const probing = revocationProbe(() => back && Date.now() > stoppedAt + 10_000);
      await sleep(5000);
      await redis.start();
      back = true;
      await probing;
      return {
        outcome: `${probe.revoked} tokens revoked on one replica and tried at once on the other: ${probe.refusedAtOnce} refused`,
      };
    });
    await fault('Chromium killed', async () => {
      const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
      try {
        accessSync(chromium, constants.X_OK);
      } catch {
        return {
          skipped: `no Chromium at ${chromium} (set CHROMIUM_PATH): PNG renders answer 503 renderer_unavailable`,
        };
      }
      const killed = [];
      // A selection no other request made, so the page is not served from the dashboards' cache.
      let day = 0;
      const uncached = () => {
        day += 1;
        return `${P}/dashboards/expenses_dashboard/results?date_range=2024-02-${String(day).padStart(2, '0')}&date_range=2024-11-${String(1 + (process.pid % 28)).padStart(2, '0')}`;
      };
      for (const r of replicas) {
        // Chromium starts with a replica's first PNG render, whatever traffic reached it so far: one is
        // asked of this replica, and its Chromium killed once it runs.
        const render = call('png render (Chromium killed under it)', 'GET', uncached(), {
          token: admin,
          on: r,
        });
        let answered;
        void render.then((reply) => (answered = reply));
        let pid;
        const deadline = Date.now() + 60_000;
        while (!(pid = chromiumOf(r.child.pid)) && !answered && Date.now() < deadline)
          await sleep(20);
        pid ??= chromiumOf(r.child.pid);
        if (!pid) {
          return {
            skipped: `replica ${r.name} ran no Chromium for a PNG render (answered ${answered?.status ?? 'nothing within 60 s'})`,
          };
        }
        process.kill(pid, 'SIGKILL');
        // The pool launches a new one for the next render.
        const cut = await render;
        const after = await call('png render after Chromium killed', 'GET', uncached(), {
          token: admin,
          on: r,
        });
        killed.push(
          `${r.name}: Chromium (pid ${pid}) killed under a render answered ${cut.status}, the next render ${after.status}`,
        );
      }
      return { outcome: killed.join('; ') };
    });
    let servedThroughFailedBuild = 0;
    let failedBuildStatus;
    await fault('data disks full during a build', async () => {
      // Both disks: the builds queue lets either replica run the build.
      const fillers = replicas.map((r) => {
        const filler = join(work, `data-${r.name}`, 'filler');
        // Leaves 256 KB: the build's DuckDB file cannot be written.
        const { bavail, bsize } = statfsSync(join(work, `data-${r.name}`));
        writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - 256 * 1024)));
        return filler;
      });
      // An export on each disk filled to the last 4 KB: its file cannot be written (503 with Retry-After,
      // not a 500); the 256 KB are given back for the build.
      const tight = replicas.map((r) => {
        const file = join(work, `data-${r.name}`, 'filler-tight');
        const { bavail, bsize } = statfsSync(join(work, `data-${r.name}`));
        writeFileSync(file, Buffer.alloc(Math.max(0, bavail * bsize - 4096)));
        return file;
      });
      const exportsOnFullDisks = await Promise.all(
        replicas.map((r) =>
          call('export on a full disk', 'GET', `${P}/datasets/expense_transactions/results`, {
            token: admin,
            accept: 'text/csv',
            on: r,
          }),
        ),
      );
      for (const file of tight) rmSync(file, { force: true });
      const build = call('build', 'POST', `${P}/build`, { token: admin, on: replicas[0] });
      const readers = (async () => {
        for (let i = 0; i < 20; i += 1) {
          const reply = await call(
            'result during failed build',
            'GET',
            `${P}/datasets/expenses_by_month/results`,
            { on: replicas[i % 2] },
          );
          if (reply.status === 200) servedThroughFailedBuild += 1;
          await sleep(50);
        }
      })();
      failedBuildStatus = (await build).status;
      await readers;
      for (const filler of fillers) rmSync(filler, { force: true });
      return {
        outcome: `exports answered ${exportsOnFullDisks.map((e) => (e.status === 'refused' ? 'a cut connection (their stream had begun)' : e.status)).join(' and ')}; the build answered ${failedBuildStatus}; ${servedThroughFailedBuild} of 20 results served meanwhile`,
      };
    });
    let killedMidBuild;
    await fault('the replica running a build SIGKILLed mid-build, then restarted', async () => {
      // Either replica may take the build from the queue: the one that logs its start is killed.
      const seen = replicas.map((x) => x.seen);
      const build = call('build (its builder killed)', 'POST', `${P}/build`, {
        token: admin,
        on: replicas[1],
      });
      let r;
      for (const deadline = Date.now() + 60_000; !r && Date.now() < deadline;) {
        r = replicas.find((x, i) =>
          x.linesSince(seen[i]).some((line) => /"msg":"build started"/.test(line)),
        );
        if (!r) await sleep(20);
      }
      if (!r) return { skipped: 'no replica logged a build start within 60 s' };
      killedMidBuild = r;
      r.url = '';
      await r.kill('SIGKILL');
      await r.start();
      const waiter = await build;
      // The restarted replica, or the queue's stall check, records how the cut build ended.
      let history;
      let latest;
      for (
        const deadline = Date.now() + 30_000;
        Date.now() < deadline && (!latest || latest.status === 'running');
      ) {
        history = await call('builds after the kill', 'GET', `${P}/builds`, {
          token: admin,
          on: r,
        });
        latest = history.status === 200 ? JSON.parse(history.text)[0] : undefined;
        if (!latest || latest.status === 'running') await sleep(500);
      }
      return {
        outcome: `replica ${r.name} killed mid-build; the request that asked for it answered ${waiter.status}; after the restart the build is ${latest?.status ?? `unknown (${history.status})`}`,
      };
    });
    await fault('the other replica SIGKILLed mid-request, then restarted', async () => {
      const r = replicas.find((x) => x !== killedMidBuild) ?? replicas[0];
      const cut = call('export', 'GET', `${P}/datasets/expense_transactions/results`, {
        token: admin,
        accept: 'text/csv',
        on: r,
      });
      await sleep(5);
      r.url = '';
      await r.kill('SIGKILL');
      const { status } = await cut;
      await r.start();
      return {
        outcome: `replica ${r.name} killed with an export in flight (its client saw ${status})`,
      };
    });
    await sleep(2000);
    stop = true;
    await Promise.all(loops);

    log('checking what was answered');
    const db = new Client({ connectionString: pg.url });
    await db.connect();
    const losses = [];
    const audited = async (action, target) =>
      (
        await db.query(
          `SELECT 1 FROM audit_events WHERE action = $1 AND target = $2 AND outcome = 'success'`,
          [action, target],
        )
      ).rowCount > 0;
    const revokedIds = new Set(writes.revoked.map((t) => t.id));
    for (const { id } of writes.tokens) {
      if (!(await audited('token.create', id))) losses.push(`token ${id}: no audit row`);
      const row = (await db.query('SELECT 1 FROM access_tokens WHERE id = $1', [id])).rowCount;
      if (!revokedIds.has(id) && row === 0) losses.push(`token ${id}: answered 200, not stored`);
    }
    for (const { id, token } of writes.revoked) {
      if (!(await audited('token.revoke', id))) losses.push(`revocation of ${id}: no audit row`);
      for (const r of replicas) {
        const me = await fetch(`${r.url}${P}/me`, {
          headers: { Authorization: `Bearer ${token}` },
        });
        if (me.status !== 401)
          losses.push(`revoked token ${id} answered ${me.status} on ${r.name}`);
      }
    }
    for (const username of writes.users) {
      if ((await db.query('SELECT 1 FROM users WHERE username = $1', [username])).rowCount === 0)
        losses.push(`user ${username}: answered 200, not stored`);
      if (!(await audited('user.create', username))) losses.push(`user ${username}: no audit row`);
    }
    for (const username of writes.edits) {
      if (!(await audited('user.update', username)))
        losses.push(`edit of ${username}: no audit row`);
    }
    await db.end();

    console.log('\n## Fault drill\n');
    console.log(`replicas: 2, loops: ${CONCURRENCY}, requests: ${results.requests}`);
    console.log('\n| fault | requests while it lasted | outcome |\n|---|---:|---|');
    for (const f of faults)
      console.log(
        `| ${f.name} | ${f.requestsDuring} | ${f.skipped ? `SKIPPED: ${f.skipped}` : f.outcome} |`,
      );
    console.log(
      `\nrevocations tried at once on the other replica around the Redis fault: ${probe.revoked}, refused at once: ${probe.refusedAtOnce}${Object.keys(probe.notDone).length ? `; not done: ${JSON.stringify(probe.notDone)}` : ''}`,
    );
    for (const item of probe.stale.slice(0, 20)) console.log('  ', item);
    console.log('\n| kind | answers |\n|---|---|');
    for (const [kind, statuses] of Object.entries(results.byKind)) {
      console.log(
        `| ${kind} | ${Object.entries(statuses)
          .map(([s, n]) => `${s}: ${n}`)
          .join(', ')} |`,
      );
    }
    console.log(
      `\nconnections refused or cut (replicas down, mostly): ${JSON.stringify(results.refusedReasons)}`,
    );
    console.log(
      `\nwrites answered 2xx: ${writes.tokens.length} tokens (${writes.revoked.length} revoked), ${writes.users.length} users (${writes.edits.length} edited)`,
    );
    console.log(
      `build on a full disk: ${failedBuildStatus}; results served meanwhile: ${servedThroughFailedBuild} of 20`,
    );
    console.log(
      `5xx other than 503: ${results.wrong.length}; 503 without Retry-After: ${results.noRetryAfter}; hangs: ${results.hangs.length}`,
    );
    for (const item of [...results.wrong, ...results.hangs].slice(0, 20)) console.log('  ', item);
    console.log(`lost: ${losses.length}`);
    for (const item of losses.slice(0, 20)) console.log('  ', item);
    const failures = [];
    if (losses.length) failures.push(`${losses.length} losses`);
    if (results.wrong.length) failures.push('5xx answers other than 503');
    if (results.noRetryAfter) failures.push('503 without Retry-After');
    if (results.hangs.length) failures.push('hangs');
    if (probe.stale.length)
      failures.push(`${probe.stale.length} revoked tokens still served by the other replica`);
    if (probe.revoked === 0) failures.push('no revocation was tried around the Redis fault');
    if (failedBuildStatus !== 500)
      failures.push(`the build on full disks answered ${failedBuildStatus}, not 500 build_failed`);
    if (servedThroughFailedBuild < 20)
      failures.push('the previous environment was not served through the failed build');
    console.log(`\nthe replicas' logs: ${LOGS}`);
    console.log(failures.length ? `\nFAILED: ${failures.join('; ')}` : '\nPASSED');
    process.exitCode = failures.length ? 1 : 0;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // best effort
      }
    }
    rmSync(work, { recursive: true, force: true });
    if (existsSync(work)) log('left', work);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
