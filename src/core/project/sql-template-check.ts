import { Environment, Template } from 'nunjucks';

/** A `ref('name')` found in a template, with its line for problem messages. */
export interface FoundRef {
  name: string;
  line: number;
}

/** Template errors read `(file) [Line 3, Column 5]\n  what`; keeps the line and the what. */
export function splitTemplateError(message: string): { line?: number; message: string } {
  const located = /\[Line (\d+), Column \d+\]\s*([\s\S]*)$/.exec(message);
  if (located) return { line: Number(located[1]), message: located[2].trim() };
  return { message: message.replace(/^\([^)]*\)\s*/, '').trim() };
}

// Parsing only: the engine's rendering environment is configured alike (see sql-renderer.ts).
const syntaxEnvironment = new Environment([], { autoescape: true, throwOnUndefined: true });

/** The template's syntax error, if it has one. */
export function templateSyntaxError(
  sql: string,
  file: string,
): { line?: number; message: string } | undefined {
  try {
    new Template(sql, syntaxEnvironment, file, true);
    return undefined;
  } catch (error) {
    return splitTemplateError(error instanceof Error ? error.message : String(error));
  }
}

const TAG = /\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}/g;
const COMMENT = /\{#[\s\S]*?#\}/g;
const REF_CALL = /(?<![\w.])ref\s*\(/g;
const LITERAL_REF = /^ref\s*\(\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*\)/;

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Finds `ref()` calls inside template tags. Dependencies must be known before any request arrives (to order
 * the build and detect cycles), so `ref` takes a literal name; a computed one is reported in `dynamic`.
 */
export function findRefs(sql: string): { refs: FoundRef[]; dynamic: number[] } {
  // Blank out comments but keep offsets, so line numbers stay right.
  const text = sql.replace(COMMENT, (comment) => comment.replace(/[^\n]/g, ' '));
  const refs: FoundRef[] = [];
  const dynamic: number[] = [];
  for (const tag of text.matchAll(TAG)) {
    const body = tag[1] ?? tag[2];
    const bodyStart = (tag.index ?? 0) + 2;
    for (const call of body.matchAll(REF_CALL)) {
      const at = call.index ?? 0;
      const line = lineAt(text, bodyStart + at);
      const literal = LITERAL_REF.exec(body.slice(at));
      if (literal) refs.push({ name: literal[1] ?? literal[2], line });
      else dynamic.push(line);
    }
  }
  return { refs, dynamic };
}

const PARAM = /(?<![\w.])params\.([a-z][a-z0-9_]*)/g;

/** `params.<name>` read inside template tags, with the line of the first read of each. */
export function findParams(sql: string): FoundRef[] {
  const text = sql.replace(COMMENT, (comment) => comment.replace(/[^\n]/g, ' '));
  const found = new Map<string, number>();
  for (const tag of text.matchAll(TAG)) {
    const body = tag[1] ?? tag[2];
    const bodyStart = (tag.index ?? 0) + 2;
    for (const read of body.matchAll(PARAM)) {
      if (!found.has(read[1])) found.set(read[1], lineAt(text, bodyStart + (read.index ?? 0)));
    }
  }
  return [...found].map(([name, line]) => ({ name, line }));
}
