import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  Step,
  checkablePrints,
  linkedClone,
  markdownBlocks,
  runScript,
  shellSteps,
  squeeze,
} from './support/doc-walkthrough';
import { REPO_ROOT } from './support/server';
import { freePort, tempDir } from './support/services';

const TUTORIAL = join(REPO_ROOT, 'docs', 'tutorial.md');
/** The port the page serves the shop on; the test gives it a free one instead. */
const PAGE_PORT = '4466';

/** The project's files: each path of the page's file tree, with the block that follows its name. */
function projectFiles(): Map<string, string> {
  const blocks = markdownBlocks(TUTORIAL);
  const tree = blocks.find((block) => block.lines[0] === 'shop/');
  if (!tree) throw new Error('docs/tutorial.md: no "shop/" file tree');
  const files = new Map<string, string>();
  for (const path of tree.lines.slice(1).map((line) => line.trim())) {
    const block = blocks.find((candidate) =>
      candidate.before.trimStart().startsWith(`\`${path}\``),
    );
    if (!block) throw new Error(`docs/tutorial.md: no block for ${path}`);
    files.set(path, `${block.lines.join('\n')}\n`);
  }
  return files;
}

/**
 * docs/tutorial.md followed as a new user would, on a clone where the README's first start (`npm start`, the
 * example project, the default data folder) still runs: the project written from the page's blocks beside
 * the clone, then every command of the page in order, the server it starts in the background and the calls
 * "in another terminal" from a folder of their own. Any command that fails fails the test, and what a
 * command's comments say it prints must be printed. Ports are the only change: free ones instead of 4465 and
 * 4466.
 */
/** The Nunjucks tags of a template (`{% ... %}`, `{{ ... }}`) whose opening and closing sit on two lines. */
function splitTags(template: string): string[] {
  return template
    .split('\n')
    .filter((line) => /\{%(?![^\n]*%\})|\{\{(?![^\n]*\}\})/.test(line))
    .map((line) => line.trim());
}

describe('docs/tutorial.md', () => {
  it('shows the dashboard template as a reader writes it, and prettier keeps such templates so', () => {
    const template = projectFiles().get('dashboards/sales_report.html') ?? '';
    expect(template.split('\n')).toEqual(
      expect.arrayContaining(['{% extends "drey/dashboard.html" %}', '{% block content %}']),
    );
    expect(splitTags(template)).toEqual([]);
    // `npm run format` formats docs/ too: with the repository's settings, the code in a page's blocks is
    // left as written (prettier's HTML formatter once reflowed this template, tags cut in two).
    // Prettier's own command (its API loads ES modules, which Jest's loader cannot), as `npm run format` runs.
    const page = `# A page\n\n\`\`\`html\n${template}\`\`\`\n`;
    const formatted = spawnSync(
      join(REPO_ROOT, 'node_modules', '.bin', 'prettier'),
      ['--stdin-filepath', 'docs/page.md'],
      { cwd: REPO_ROOT, input: page, encoding: 'utf8' },
    );
    expect([formatted.status, formatted.stderr]).toEqual([0, '']);
    expect(formatted.stdout).toBe(page);
  });

  it('runs as written after the README first start, and leaves that server serving its own project', async () => {
    const steps = shellSteps(markdownBlocks(TUTORIAL));
    expect(steps.length).toBeGreaterThan(8);
    // What the comments say is checked, not skipped: the run's table is among it.
    expect(steps.flatMap(checkablePrints)).toEqual(
      expect.arrayContaining(['(2 rows)', '2024-01-04 5.25']),
    );
    const dir = tempDir('drey-tutorial-');
    const clone = linkedClone(dir.path);
    for (const [path, content] of projectFiles()) {
      mkdirSync(dirname(join(dir.path, 'shop', path)), { recursive: true });
      writeFileSync(join(dir.path, 'shop', path), content);
    }
    const out = join(dir.path, 'out');
    const elsewhere = join(dir.path, 'terminal-2');
    mkdirSync(out);
    mkdirSync(elsewhere);
    const [readmePort, shopPort] = [await freePort(), await freePort()];

    const script = [
      'set -euo pipefail',
      'wait_ready() { for _ in $(seq 240); do curl -fs "http://127.0.0.1:$1/health/ready" > /dev/null && return 0; sleep 0.5; done; echo "no server ready on port $1" >&2; return 1; }',
      // The README's first start: the example project, the default DATA_DIR, left running.
      'echo "readme $(date +%s)" >> "$OUT/steps"',
      'PORT=$README_PORT npm start > "$OUT/readme-server.log" 2>&1 &',
      'wait_ready $README_PORT',
      ...steps.flatMap((step, index) => {
        const command = step.command.replaceAll(PAGE_PORT, String(shopPort));
        const mark = `echo "${index} $(date +%s)" >> "$OUT/steps"`;
        if (/\bnpm start\b/.test(command)) {
          // The page's server runs in its own terminal: here, in the background, until it is ready.
          return [
            mark,
            `${command} > "$OUT/${index}.out" 2>&1 &`,
            `wait_ready ${shopPort}`,
            'cd "$ELSEWHERE"',
          ];
        }
        return [mark, `{\n${command}\n} > "$OUT/${index}.out" 2> "$OUT/${index}.err"`];
      }),
      'echo "done $(date +%s)" >> "$OUT/steps"',
    ].join('\n');

    const run = await runScript(script, {
      cwd: clone,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: join(dir.path, 'home'),
        npm_config_update_notifier: 'false',
        README_PORT: String(readmePort),
        OUT: out,
        ELSEWHERE: elsewhere,
      },
      // About 90 s on two idle cores; a loaded machine (the whole suite, other work) may need twice that.
      timeoutMs: 240000,
    });
    try {
      const read = (name: string) =>
        existsSync(join(out, name)) ? readFileSync(join(out, name), 'utf8') : '';
      // Each step with the time it started, so that a run out of time says where the time went.
      const marks = read('steps').trim().split('\n');
      const at = marks[marks.length - 1].split(' ')[0];
      const failed: Step | undefined = steps[Number(at)];
      if (run.code !== 0 || at !== 'done') {
        const start = Number(marks[0].split(' ')[1]);
        const timings = marks.map((mark) => {
          const [step, time] = mark.split(' ');
          return `${step}@${Number(time) - start}s`;
        });
        throw new Error(
          [
            `stopped with ${run.code} at ${failed ? `docs/tutorial.md:${failed.line}: ${failed.command}` : at}`,
            failed ? read(`${at}.err`).slice(-2000) : run.stderr.slice(-2000),
            `steps started at: ${timings.join(' ')}`,
          ].join('\n'),
        );
      }

      const missing = steps.flatMap((step, index) => {
        const printed = squeeze(read(`${index}.out`));
        return checkablePrints(step)
          .filter((line) => !printed.includes(line))
          .map((line) => `docs/tutorial.md:${step.line}: "${line}" not printed by ${step.command}`);
      });
      expect(missing).toEqual([]);
      const report = readFileSync(join(elsewhere, 'report.html'), 'utf8');
      expect(report).toMatch(/^<!doctype html>/i);
      // The template's content block, drawn: the chart's title and the table.
      expect(report).toContain('Revenue per day');
      expect(report).toContain('<table class="data"');

      // The shop's build and its admin did not reach the example's server and its data folder.
      const example = await fetch(
        `http://127.0.0.1:${readmePort}/api/service-v0/project/expenses/v1/datasets/expenses_by_month/results`,
      );
      expect(example.status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${readmePort}/health/ready`)).status).toBe(200);
    } finally {
      await run.stop();
      dir.remove();
    }
  }, 300000);
});
