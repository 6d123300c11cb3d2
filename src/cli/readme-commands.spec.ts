import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { USAGE } from '@/cli/cli-args';

/** The commands `drey --help` lists, by their words before any argument (`users add`, `embed-token`). */
function helpCommands(): string[] {
  const section = USAGE.slice(USAGE.indexOf('Commands:'), USAGE.indexOf('\n\nRun '));
  return section
    .split('\n')
    .slice(1)
    .filter((line) => /^ {2}[a-z]/.test(line))
    .map((line) =>
      line
        .trim()
        .split(/\s+/)
        .filter((word) => /^[a-z][a-z-]*$/.test(word))
        .slice(0, 2)
        .join(' '),
    )
    .map((words) => (words.startsWith('users ') ? words : words.split(' ')[0]));
}

/** The first cells of the README's command table (section "The command line"), as written. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const start = readme.indexOf('## The command line');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return section
    .split('\n')
    .filter((line) => /^\| `/.test(line))
    .map((line) => /^\| `([^`]+)`/.exec(line)?.[1] ?? '');
}

describe("the README's command table", () => {
  it('lists every command of drey --help (help itself aside)', () => {
    const table = readmeCommands();
    const missing = helpCommands()
      .filter((command) => command !== 'help')
      .filter(
        (command) => !table.some((cell) => cell === command || cell.startsWith(`${command} `)),
      );
    expect(missing).toEqual([]);
  });
});
