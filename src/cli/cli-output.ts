/**
 * Where the command line prints: a terminal or a pipe in `drey`, a recorder in tests. Its own file because
 * `drey.ts` and every command print through it, and the commands are what `drey.ts` runs.
 */
export interface Output {
  out(line: string): void;
  /** On a terminal: redraws one status line in place (a progress bar); absent otherwise. */
  status?(line: string): void;
  /** Resolves once what was printed has been taken by the reader: a slow pipe slows the query down. */
  drained?(): Promise<void>;
}

/** What `drey` gives its commands besides standard output. */
export interface CliOutput extends Output {
  err(line: string): void;
  /** Standard input, for `users reset-password --password-stdin`. */
  readInput?(): Promise<string>;
}
