import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { P } from './support/api';
import { ADMIN_PASSWORD, REPO_ROOT, TestServer, startServer } from './support/server';
import { freePort, tempDir } from './support/services';
import { signInThrough } from './support/oauth-flow';

const run = promisify(execFile);

/** The suite's CLI, on Node 20 through a loader that gives its bundle Node 22's `fs.globSync`. */
const CONFORMANCE = [
  '--import',
  join(REPO_ROOT, 'test', 'support', 'conformance', 'register.mjs'),
  join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js'),
];

/** The server scenarios that apply to a server with Drey's own tools: each must pass. */
const APPLIES = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'dns-rebinding-protection',
  'http-header-validation',
  'sep-2164-resource-not-found',
];

/**
 * The others, and why. Most call fixture tools, resources or prompts of the SDKs' "everything" test
 * server by name (`test_simple_text`, `test://static-text`, ...), which a server serving a data project
 * does not have.
 */
const DOES_NOT_APPLY: Record<string, string> = {
  'logging-set-level': 'no logging capability: deprecated in 2026-07-28, Drey logs to its own log',
  'completion-complete': 'no prompts or resource templates to complete',
  'tools-call-simple-text': 'calls the fixture tool test_simple_text',
  'tools-call-image': 'calls the fixture tool test_image_content',
  'tools-call-audio': 'calls a fixture audio tool; Drey answers no audio',
  'tools-call-embedded-resource': 'calls a fixture tool that embeds a resource',
  'tools-call-mixed-content': 'calls a fixture tool of mixed content',
  'tools-call-with-logging': 'calls a fixture tool that logs to the client',
  'tools-call-error':
    'calls the fixture tool test_error_handling (Drey refusals are covered in mcp.e2e-spec.ts)',
  'tools-call-with-progress': 'calls a fixture tool that reports progress',
  'tools-call-sampling': 'calls a fixture tool that asks the client for sampling',
  'tools-call-elicitation': 'calls a fixture tool that elicits input',
  'json-schema-2020-12': 'lists the fixture tool json_schema_2020_12_tool',
  'elicitation-sep1034-defaults': 'calls a fixture tool that elicits input',
  'elicitation-sep1330-enums': 'calls a fixture tool that elicits input',
  'server-sse-polling':
    'resumable SSE streams of a session: the server is stateless (only warnings)',
  'server-sse-multiple-streams':
    'several SSE streams of one session: the server is stateless (only warnings)',
  'resources-read-text': 'reads the fixture resource test://static-text',
  'resources-read-binary': 'reads a fixture binary resource',
  'resources-templates-read': 'reads a fixture resource template; Drey has none',
  'resources-subscribe': 'subscribes to a fixture resource (2026-07-28 clients listen instead)',
  'resources-unsubscribe': 'unsubscribes from a fixture resource',
  'prompts-list': 'Drey serves no prompts',
  'prompts-get-simple': 'Drey serves no prompts',
  'prompts-get-with-args': 'Drey serves no prompts',
  'prompts-get-embedded-resource': 'Drey serves no prompts',
  'prompts-get-with-image': 'Drey serves no prompts',
  'server-session-lifecycle':
    'sessions of a stateful server: Drey keeps none (the scenario checks nothing)',
  'http-custom-header-server-validation':
    'needs a tool with x-mcp-header parameters; Drey has none',
  'sep-2640-skills-directory': 'the skills extension: Drey serves no skills',
  'sep-2640-skills-enumeration': 'the skills extension: Drey serves no skills',
  'sep-2640-skills-manifest': 'the skills extension: Drey serves no skills',
  ...Object.fromEntries(
    [
      'tasks-lifecycle',
      'tasks-capability-negotiation',
      'tasks-wire-fields',
      'tasks-request-state-removal',
      'tasks-mrtr-input',
      'tasks-request-headers',
      'tasks-dispatch-and-envelope',
      'tasks-status-notifications',
      'tasks-required-task-error',
      'tasks-mrtr-composition',
    ].map((name) => [name, 'the tasks extension: no tool of Drey runs as a task']),
  ),
  ...Object.fromEntries(
    [
      'input-required-result-basic-elicitation',
      'input-required-result-basic-sampling',
      'input-required-result-basic-list-roots',
      'input-required-result-request-state',
      'input-required-result-multiple-input-requests',
      'input-required-result-multi-round',
      'input-required-result-missing-input-response',
      'input-required-result-non-tool-request',
      'input-required-result-result-type',
      'input-required-result-unsupported-methods',
      'input-required-result-tampered-state',
      'input-required-result-capability-check',
      'input-required-result-ignore-extra-params',
      'input-required-result-validate-input',
    ].map((name) => [
      name,
      'calls fixture tools that ask the client for input; no tool of Drey does',
    ]),
  ),
};

/**
 * Scenarios that apply but carry checks that exercise only the "everything" server's fixtures: these run,
 * and every check passes but the ones named here, each with why (the suite itself says, in its failure,
 * that the fixture was not listed, so the check was never exercised against Drey).
 */
const APPLIES_BUT: Record<string, Record<string, string>> = {
  'server-stateless': {
    'sep-2575-server-rejects-undeclared-capability':
      'needs the fixture tool test_missing_capability',
    'sep-2575-missing-capability-http-400': 'needs the fixture tool test_missing_capability',
    'sep-2575-http-server-no-independent-requests-on-stream':
      'needs the fixture tool test_streaming_elicitation',
    'sep-2575-server-no-log-without-loglevel': 'needs the fixture tool test_logging_tool',
  },
  caching: {
    'sep-2549-prompts-list-caching-hints':
      'lists prompts: Drey serves none (prompts/list is -32601)',
  },
};

describe('@modelcontextprotocol/conformance against P/mcp', () => {
  let t: TestServer;
  const cwd = tempDir('drey-conformance-');

  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
    cwd.remove();
  });

  it('classifies every server scenario of the suite as applying or not', async () => {
    const { stdout } = await run(process.execPath, [...CONFORMANCE, 'list'], { cwd: cwd.path });
    const server = stdout.slice(0, stdout.indexOf('Client scenarios'));
    const listed = [...server.matchAll(/^ {2}- (\S+)/gm)].map((match) => match[1]);
    expect(listed.length).toBeGreaterThan(0);
    expect([...listed].sort()).toEqual(
      [...APPLIES, ...Object.keys(APPLIES_BUT), ...Object.keys(DOES_NOT_APPLY)].sort(),
    );
  });

  async function scenario(name: string): Promise<string> {
    const { stdout } = await run(
      process.execPath,
      [...CONFORMANCE, 'server', '--url', `${t.url}${P}/mcp`, '--scenario', name],
      // Plain text: the summary is read below.
      { cwd: cwd.path, timeout: 60000, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    ).catch((error: { stdout?: string; code?: number }) => {
      // The suite exits non-zero when a check fails: the output says which.
      if (error.stdout?.includes('Passed:')) return { stdout: error.stdout };
      throw new Error(`conformance ${name} exited ${error.code}:\n${error.stdout ?? ''}`);
    });
    return stdout;
  }

  it.each(APPLIES)('passes %s', async (name) => {
    const stdout = await scenario(name);
    const summary = stdout.match(/Passed: (\d+)\/(\d+), (\d+) failed/);
    expect(summary).not.toBeNull();
    const [, passed, total, failed] = (summary as RegExpMatchArray).map(Number);
    expect(failed).toBe(0);
    expect(passed).toBe(total);
    expect(total).toBeGreaterThan(0);
  });

  it.each(Object.keys(APPLIES_BUT))(
    'passes %s but the checks that need the suite’s fixtures',
    async (name) => {
      const stdout = await scenario(name);
      // The suite colours its lines whatever NO_COLOR says: the escapes are taken out first.
      const plain = stdout.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
      const failing = [...plain.matchAll(/\[([\w-]+)\s*\] FAILURE/g)].map((match) => match[1]);
      expect(failing.sort()).toEqual(Object.keys(APPLIES_BUT[name]).sort());
      const summary = stdout.match(/Passed: (\d+)\/(\d+), (\d+) failed/);
      expect(Number(summary?.[1])).toBeGreaterThan(0);
    },
  );
});

describe('@modelcontextprotocol/conformance against Drey’s authorization server (OAUTH_SERVER)', () => {
  let t: TestServer;
  const cwd = tempDir('drey-conformance-auth-');

  beforeAll(async () => {
    t = await startServer({ OAUTH_SERVER: 'true' });
  });
  afterAll(async () => {
    await t.close();
    cwd.remove();
  });

  it('passes every authorization server scenario, a person signing in on Drey’s page', async () => {
    const port = await freePort();
    const redirect = `http://127.0.0.1:${port}/callback`;
    const registered = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'conformance',
        redirect_uris: [redirect],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const suite = spawn(
      process.execPath,
      [
        ...CONFORMANCE,
        'authorization',
        '--url',
        t.url,
        '--client-id',
        clientId,
        '--resource',
        `${t.url}/mcp`,
        '-p',
        String(port),
        '-o',
        join(cwd.path, 'results'),
      ],
      { cwd: cwd.path, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    );
    let stdout = '';
    suite.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const ended = new Promise<number | null>((resolve) => suite.on('close', resolve));
    try {
      // The suite prints the URL a person opens; the person signs in on Drey's pages.
      const started = Date.now();
      let url: string | undefined;
      while (url === undefined && Date.now() - started < 30_000) {
        url = /^(http:\/\/\S+\/oauth\/authorize\?\S+)$/m.exec(stdout)?.[1];
        if (url === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (url === undefined) throw new Error(`no authorization URL printed:\n${stdout}`);
      const { callback } = await signInThrough(url, {
        password: ADMIN_PASSWORD,
        redirectUri: redirect,
      });
      // The browser lands on the suite's callback page.
      await fetch(callback.href);
      const code = await ended;
      // Both scenarios: the metadata (2 checks) and the code grant, each with no failure.
      const total = /Total: (\d+) passed, (\d+) failed/.exec(stdout);
      expect({ code, failed: total?.[2] }).toEqual({ code: 0, failed: '0' });
      expect(Number(total?.[1])).toBeGreaterThanOrEqual(3);
      expect(stdout).toMatch(/✓ authorization-code-grant: 1 passed, 0 failed/);
    } finally {
      suite.kill();
    }
  });
});
