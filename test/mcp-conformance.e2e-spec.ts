import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { P } from './support/api';
import { REPO_ROOT, TestServer, startServer } from './support/server';
import { tempDir } from './support/services';

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
    expect([...listed].sort()).toEqual([...APPLIES, ...Object.keys(DOES_NOT_APPLY)].sort());
  });

  it.each(APPLIES)('passes %s', async (scenario) => {
    const { stdout } = await run(
      process.execPath,
      [...CONFORMANCE, 'server', '--url', `${t.url}${P}/mcp`, '--scenario', scenario],
      // Plain text: the summary is read below.
      { cwd: cwd.path, timeout: 60000, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    ).catch((error: { stdout?: string; code?: number }) => {
      throw new Error(`conformance ${scenario} exited ${error.code}:\n${error.stdout ?? ''}`);
    });
    const summary = stdout.match(/Passed: (\d+)\/(\d+), (\d+) failed/);
    expect(summary).not.toBeNull();
    const [, passed, total, failed] = (summary as RegExpMatchArray).map(Number);
    expect(failed).toBe(0);
    expect(passed).toBe(total);
    expect(total).toBeGreaterThan(0);
  });
});
