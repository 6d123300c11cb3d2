import { readFileSync } from 'node:fs';

/** One call of a doc: the shell text (continuation lines included) and the status written under it. */
export interface DocCall {
  line: number;
  shell: string;
  status: number;
}

export interface DocScript {
  /** A bash script that runs every block in order and writes, before each call, `@@ <index>` then the
   * call's status to `$STATUS_FILE`. */
  script: string;
  calls: DocCall[];
}

const STATUS = /^# → (\d{3})\s*$/;

/**
 * The `sh` blocks of a Markdown file as one script. Convention of docs/api.md: each `curl` command is
 * followed by a `# → <status>` line; other comments are what it prints; lines before any call (variables)
 * run as they are. `curl` is wrapped to report the status on stderr (`%{stderr}`, curl 7.63 and later),
 * so that the commands run as written and their output stays theirs.
 */
export function docScript(markdownFile: string): DocScript {
  const lines = readFileSync(markdownFile, 'utf8').split('\n');
  const calls: DocCall[] = [];
  const body: string[] = [];
  let inBlock = false;
  let pending: { line: number; text: string[] } | undefined;
  lines.forEach((text, index) => {
    if (/^```sh\s*$/.test(text)) {
      inBlock = true;
      return;
    }
    if (inBlock && /^```\s*$/.test(text)) {
      inBlock = false;
      if (pending)
        throw new Error(`${markdownFile}:${pending.line}: a call without "# → <status>"`);
      return;
    }
    if (!inBlock) return;
    const status = STATUS.exec(text);
    if (status) {
      if (!pending) throw new Error(`${markdownFile}:${index + 1}: a status with no call above it`);
      calls.push({ line: pending.line, shell: pending.text.join('\n'), status: Number(status[1]) });
      body.push(`echo "@@ ${calls.length - 1}" >> "$STATUS_FILE"`, ...pending.text);
      pending = undefined;
      return;
    }
    if (text.startsWith('#') || text.trim() === '') return;
    if (pending) {
      pending.text.push(text);
    } else if (/\bcurl\b/.test(text)) {
      pending = { line: index + 1, text: [text] };
    } else {
      body.push(text);
    }
  });
  const script = [
    'set -u',
    `curl() { command curl "$@" -w '%{stderr}%{http_code}\\n' 2>>"$STATUS_FILE"; }`,
    ...body,
  ].join('\n');
  return { script, calls };
}

/** The status of each call, by index, from what the script wrote. */
export function statusesOf(statusFile: string): Map<number, number> {
  const statuses = new Map<number, number>();
  let call: number | undefined;
  for (const line of readFileSync(statusFile, 'utf8').split('\n')) {
    const marker = /^@@ (\d+)$/.exec(line);
    if (marker) call = Number(marker[1]);
    else if (call !== undefined && /^\d{3}$/.test(line) && !statuses.has(call))
      statuses.set(call, Number(line));
  }
  return statuses;
}
