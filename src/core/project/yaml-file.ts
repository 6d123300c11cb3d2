import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Lexer, LineCounter, parseDocument, YAMLError } from 'yaml';
import { Problems } from '@/core/project-errors';

/** The lexer's markers that stand for no source text (see `yaml`'s CST docs). */
const MARKERS = new Set(['\u{FEFF}', '\x02', '\x18', '\x1f']);

/**
 * Where a construct left open (a `[` or `{` never closed, a quote never ended) begins: `yaml` reports such
 * an error where it noticed it, lines later. Undefined for other errors.
 */
function openedAt(text: string, error: YAMLError): number | undefined {
  const flow = /^Flow (sequence|mapping)/.test(error.message);
  const quote = /^Missing closing .?quote/.test(error.message);
  if (!flow && !quote) return undefined;
  const openers: number[] = [];
  let offset = 0;
  let unclosedQuote: number | undefined;
  for (const token of new Lexer().lex(text)) {
    if (token.length === 1 && MARKERS.has(token)) continue;
    if (offset > error.pos[0]) break;
    if (token === '[' || token === '{') openers.push(offset);
    else if (token === ']' || token === '}') openers.pop();
    else if (unclosedQuote === undefined && /^["']/.test(token)) {
      const closed =
        token.length > 1 &&
        token.endsWith(token[0]) &&
        (token[0] === "'" || !/(^|[^\\])(\\\\)*\\"$/.test(token));
      if (!closed) unclosedQuote = offset;
    }
    offset += token.length;
  }
  return quote ? unclosedQuote : openers.at(-1);
}

/** Reads a YAML file; a syntax error becomes a problem naming the line. */
export function readYaml(dir: string, file: string, problems: Problems): unknown {
  const path = join(dir, file);
  if (!existsSync(path)) {
    problems.add(file, '', 'file not found');
    return undefined;
  }
  const text = readFileSync(path, 'utf8');
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { prettyErrors: false, lineCounter });
  if (document.errors.length > 0) {
    // After the first syntax error the parser is lost, and what it reports next follows from that one
    // (a missing ] gives three more "errors" a few lines on): the first is the one to fix. A quote never
    // closed is the exception: everything after it looks wrong, and that error explains the others.
    const error =
      document.errors.find((candidate) => /^Missing closing/.test(candidate.message)) ??
      document.errors[0];
    // A `[`, `{` or quote left open is noticed lines later: the place is where it opens.
    const place = lineCounter.linePos(openedAt(text, error) ?? error.pos[0]);
    // Its message repeats the place and ends with an excerpt of the file: the place is said once.
    const message = error.message
      .split('\n', 1)[0]
      .replace(/ at line \d+, column \d+:?$/, '')
      .replace(/:$/, '');
    problems.add(file, `line ${place.line}, column ${place.col}`, message);
    problems.unparsed.add(file);
    return undefined;
  }
  return document.toJSON() as unknown;
}
