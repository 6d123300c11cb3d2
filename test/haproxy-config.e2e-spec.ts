import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { P } from './support/api';

/**
 * The shipped load balancer's limits (deploy/haproxy/haproxy.cfg, docker-compose.yml's `lb`) read as
 * HAProxy reads them for one request: `POST P/build` waits for its build, which may take longer than
 * `timeout server`; the config must let it wait, and must not send it again to another replica (a second
 * POST is a second build, or a 400 `build_in_progress` in place of the first one's answer). Run against
 * Debian's HAProxy 2.6 with a backend answering after 65 s (docs/deployment.md): before, 504 after 240 s and
 * the POST sent 4 times; after, 200 after 65 s, sent once. This spec reads the directives those runs
 * depend on, so that an edit of the file cannot lose them unnoticed.
 */
const CONFIG = readFileSync(join(__dirname, '..', 'deploy', 'haproxy', 'haproxy.cfg'), 'utf8');

type Request = { method: string; path: string };
type Section = { kind: string; name: string; lines: string[][] };

function sections(text: string): Section[] {
  const found: Section[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') continue;
    const words = line.split(/\s+/);
    if (!/^\s/.test(raw)) found.push({ kind: words[0], name: words[1] ?? '', lines: [] });
    else found[found.length - 1]?.lines.push(words);
  }
  return found;
}

const SECTIONS = sections(CONFIG);
const section = (kind: string, name?: string): Section => {
  const found = SECTIONS.find((s) => s.kind === kind && (name === undefined || s.name === name));
  if (!found) throw new Error(`no ${kind} ${name ?? ''} in haproxy.cfg`);
  return found;
};
const frontend = section('frontend', 'http');
const backendName = frontend.lines.find((words) => words[0] === 'default_backend')?.[1];
const backend = section('backend', backendName);
const defaults = section('defaults');

/** HAProxy's durations: a number and a unit (ms by default). */
function milliseconds(value: string): number {
  const match = /^(\d+)(us|ms|s|m|h|d)?$/.exec(value);
  if (!match) throw new Error(`not a duration: ${value}`);
  const unit = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    (match[2] ?? 'ms') as 'ms'
  ];
  return Number(match[1]) * unit;
}

/** The backend's named ACLs that this spec knows (`method`, `path_reg`, `path_end`), for one request. */
function acl(name: string, request: Request): boolean {
  const lines = backend.lines.filter((words) => words[0] === 'acl' && words[1] === name);
  if (lines.length === 0) throw new Error(`no acl ${name}`);
  // Lines of the same name are ORed, as HAProxy does.
  return lines.some(([, , criterion, ...values]) => {
    if (criterion === 'method') return values.includes(request.method);
    if (criterion === 'path_reg') return values.some((re) => new RegExp(re).test(request.path));
    if (criterion === 'path_end') return values.some((end) => request.path.endsWith(end));
    throw new Error(`acl criterion ${criterion} unknown to this spec`);
  });
}

/** Whether an `if` condition (named ACLs, ANDed, `!` negating) holds for the request. */
function holds(condition: string[], request: Request): boolean {
  if (condition.some((word) => word === 'or' || word === '||' || word.startsWith('{'))) {
    throw new Error(`condition ${condition.join(' ')} unknown to this spec`);
  }
  return condition.every((word) =>
    word.startsWith('!') ? !acl(word.slice(1), request) : acl(word, request),
  );
}

/** The `http-request <action> ...` lines of the backend that apply to the request. */
function actions(request: Request): string[][] {
  return backend.lines
    .filter((words) => words[0] === 'http-request')
    .filter((words) => {
      const at = words.indexOf('if');
      return at < 0 || holds(words.slice(at + 1), request);
    })
    .map((words) => words.slice(1, words.includes('if') ? words.indexOf('if') : undefined));
}

function timeoutServer(request: Request): number {
  let value = defaults.lines.find((w) => w[0] === 'timeout' && w[1] === 'server')?.[2];
  const own = backend.lines.find((w) => w[0] === 'timeout' && w[1] === 'server')?.[2];
  value = own ?? value;
  for (const action of actions(request)) {
    if (action[0] === 'set-timeout' && action[1] === 'server') value = action[2];
  }
  if (value === undefined) throw new Error('no timeout server');
  return milliseconds(value);
}

function retriedOnTimeout(request: Request): boolean {
  const retryOn = [...defaults.lines, ...backend.lines].filter((w) => w[0] === 'retry-on').pop();
  if (!retryOn?.includes('response-timeout') && !retryOn?.includes('all-retryable-errors')) {
    return false;
  }
  return !actions(request).some((action) => action[0] === 'disable-l7-retry');
}

const BUILD = { method: 'POST', path: `${P}/build` };

describe('the shipped HAProxy configuration', () => {
  it('lets a synchronous POST P/build wait an hour for its build, and other requests 60 s as before', () => {
    expect(timeoutServer(BUILD)).toBeGreaterThanOrEqual(3_600_000);
    for (const other of [
      { method: 'GET', path: `${P}/builds` },
      { method: 'POST', path: `${P}/datasets/build/results` },
      { method: 'POST', path: `${P}/users` },
      { method: 'GET', path: `${P}/build` },
    ]) {
      expect(timeoutServer(other)).toBe(60_000);
    }
  });

  it('never sends a POST P/build again to another replica, and retries the rest as before', () => {
    expect(retriedOnTimeout(BUILD)).toBe(false);
    expect(retriedOnTimeout({ method: 'GET', path: `${P}/datasets/expenses/results` })).toBe(true);
  });
});
