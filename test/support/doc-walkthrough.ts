import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './server';

/**
 * Pages that a reader follows command by command (docs/tutorial.md, the replica recipe of
 * docs/deployment.md), run as written: their fenced blocks, their `sh` commands in order, and what each
 * command's comments say it prints. docs/api.md's calls have their own convention (doc-examples.ts).
 */

export interface Block {
  /** The fence's language (`sh`, `yaml`, `text`, ...). */
  lang: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  lines: string[];
  /** The text between the previous block and this one. */
  before: string;
}

export function markdownBlocks(markdownFile: string): Block[] {
  const blocks: Block[] = [];
  let open: Block | undefined;
  let prose: string[] = [];
  readFileSync(markdownFile, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      const fence = /^```(\S*)\s*$/.exec(text);
      if (fence && !open) {
        open = { lang: fence[1], line: index + 1, lines: [], before: prose.join('\n') };
        prose = [];
      } else if (fence && open) {
        blocks.push(open);
        open = undefined;
      } else if (open) {
        open.lines.push(text);
      } else {
        prose.push(text);
      }
    });
  return blocks;
}

/** One command of a page: its text (continuation lines included) and the lines its comments say it prints. */
export interface Step {
  line: number;
  command: string;
  prints: string[];
}

/** Whether bash can parse `text` as it is (a `for` without its `done`, a trailing `|` or `\` cannot). */
function complete(text: string): boolean {
  return spawnSync('bash', ['-n', '-c', text], { stdio: 'ignore' }).status === 0;
}

/**
 * The commands of the `sh` blocks, in order. A command runs on over the following lines until bash can parse
 * it; the `# ...` lines right after it are what it prints.
 */
export function shellSteps(blocks: Block[]): Step[] {
  const steps: Step[] = [];
  for (const block of blocks.filter((candidate) => candidate.lang === 'sh')) {
    let pending: { line: number; text: string[] } | undefined;
    block.lines.forEach((text, index) => {
      const line = block.line + 1 + index;
      if (pending) {
        pending.text.push(text);
        if (complete(pending.text.join('\n')) && !text.endsWith('\\')) {
          steps.push({ line: pending.line, command: pending.text.join('\n'), prints: [] });
          pending = undefined;
        }
        return;
      }
      if (text.trim() === '') return;
      if (text.startsWith('#')) {
        steps[steps.length - 1]?.prints.push(text.replace(/^#\s?/, ''));
        return;
      }
      if (complete(text) && !text.endsWith('\\')) steps.push({ line, command: text, prints: [] });
      else pending = { line, text: [text] };
    });
    if (pending) throw new Error(`line ${pending.line}: a command that never ends`);
  }
  return steps;
}

/**
 * The lines a step says it prints that can be checked as written: not the elided ones (`...`, `…`), compared
 * with runs of spaces made one.
 */
export function checkablePrints(step: Step): string[] {
  return step.prints
    .filter((text) => !text.includes('...') && !text.includes('…') && text.trim() !== '')
    .map(squeeze);
}

export function squeeze(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * A clone as a reader has it after `npm ci`: every entry of the repository linked into a folder of its own,
 * so that what the page writes beside the clone (`../shop`) or in it (`.data`, logs) stays in that folder.
 */
export function linkedClone(parent: string): string {
  const clone = join(parent, 'drey');
  mkdirSync(clone);
  for (const name of readdirSync(REPO_ROOT)) {
    if (['.git', '.data', '.env'].includes(name)) continue;
    symlinkSync(join(REPO_ROOT, name), join(clone, name));
  }
  return clone;
}

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Ends every process the script left running (its servers), by process group, and waits for them. */
  stop(): Promise<void>;
}

/**
 * Runs a bash script in a process group of its own, so that the servers it starts in the background are
 * found and stopped afterwards. Resolves when the script itself ends (or is killed at the time limit).
 */
export async function runScript(
  script: string,
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<ScriptRun> {
  const child = spawn('bash', ['--noprofile', '--norc', '-c', script], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const group = child.pid as number;
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => signalGroup(group, 'SIGKILL'), options.timeoutMs);
  const closed = new Promise((resolve) => child.once('close', resolve));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  // A server left running may hold the script's output open: what the script printed is in by now.
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000))]);
  return {
    code,
    stdout,
    stderr,
    async stop() {
      signalGroup(group, 'SIGTERM');
      const deadline = Date.now() + 15000;
      while (groupAlive(group) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      signalGroup(group, 'SIGKILL');
    },
  };
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // Already gone.
  }
}

function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}
