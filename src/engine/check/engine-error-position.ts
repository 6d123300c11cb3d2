/**
 * Where in a project file an engine's error points. DuckDB (like Postgres) ends a parse or bind error with
 * the offending line of the statement it was given and a caret under the spot:
 *
 *     Binder Error: Table "e" does not have a column named "amountt"
 *
 *     LINE 6:   e.amountt
 *               ^
 *
 * That statement is the model's template rendered (and, at request time, put under the CTEs of the models
 * it reads), so its line numbers are not the file's. The rendered line is found again in the file by its
 * text; the column is the caret's place in it. When the line cannot be found (a line the template wrote),
 * only the engine's own message is kept.
 */

export interface FilePosition {
  line: number;
  column: number;
}

export interface EngineErrorText {
  /** The error without its `LINE n:` excerpt and caret. */
  message: string;
  /** 1-based line of the statement, and 1-based column of the caret in that line, when the error has them. */
  line?: number;
  column?: number;
}

const EXCERPT = /\n*LINE (\d+): ([^\n]*)\n( *)\^ *$/;

/** Splits an engine error into its message and the place in `statement` (what it ran) that it names. */
export function parseEngineError(text: string, statement: string): EngineErrorText {
  const match = EXCERPT.exec(text);
  if (!match) return { message: text.trim() };
  const [whole, lineText, excerpt, pad] = match;
  const message = text.slice(0, text.length - whole.length).trim();
  const line = Number(lineText);
  const caret = pad.length - `LINE ${lineText}: `.length;
  // A long line is shortened to a window around the error, marked with "...": the caret counts from the
  // window's start, found again in the full line.
  const shown = excerpt.replace(/^\.\.\./, '').replace(/\.\.\.$/, '');
  const skipped = excerpt.length - excerpt.replace(/^\.\.\./, '').length;
  const full = statement.split('\n')[line - 1] ?? '';
  const start = full.indexOf(shown);
  if (start < 0) return { message, line };
  return { message, line, column: start + caret - skipped + 1 };
}

/**
 * The place in `source` (the template as written) of column `column` of line `line` of `statement` (what
 * the engine ran). The statement's line is looked up in the source by its text, first at the same line
 * number (templates that write no lines keep them), then anywhere when it occurs once.
 */
export function sourcePosition(
  statement: string,
  line: number,
  column: number,
  source: string,
): FilePosition | undefined {
  const ran = statement.split('\n')[line - 1];
  if (ran === undefined || ran.trim() === '') return undefined;
  const text = ran.trim();
  const indent = ran.length - ran.trimStart().length;
  const lines = source.split('\n');
  const at = (index: number): FilePosition | undefined => {
    const start = lines[index].indexOf(text);
    if (start < 0) return undefined;
    return { line: index + 1, column: Math.max(1, start + (column - indent)) };
  };
  if (lines[line - 1]?.includes(text)) return at(line - 1);
  const found = lines.flatMap((candidate, index) => (candidate.includes(text) ? [index] : []));
  if (found.length === 1) return at(found[0]);
  // A line the template filled in (`SELEC {{ columns }}`): the word at the caret, when one line has it.
  const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(ran.slice(column - 1))?.[0];
  if (!word) return undefined;
  const pattern = new RegExp(`\\b${word}\\b`);
  const holding = lines.flatMap((candidate, index) => (pattern.test(candidate) ? [index] : []));
  if (holding.length !== 1) return undefined;
  return { line: holding[0] + 1, column: (pattern.exec(lines[holding[0]])?.index ?? 0) + 1 };
}

const TAG = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}|\{#[\s\S]*?#\}/g;

/**
 * The first line of a template with SQL on it (not blank, not only a comment or a tag): where a problem the
 * engine gives no place for is reported.
 */
export function statementStart(template: string): number {
  const lines = template.replace(TAG, (tag) => tag.replace(/[^\n]/g, ' ')).split('\n');
  const index = lines.findIndex((line) => line.trim() !== '' && !line.trim().startsWith('--'));
  return index < 0 ? 1 : index + 1;
}
