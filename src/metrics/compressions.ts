/**
 * Compressions made, by `coding:effort` (a stream counts once), since the process started: the HTTP edge
 * counts each one it makes (`http/reply/content-coding.ts`) and the metrics read them
 * (`drey_compressions_total`), which is how a cached compressed read is seen to compress nothing.
 */
export const compressions = new Map<string, number>();

export function countCompression(coding: string, effort: string): void {
  const key = `${coding}:${effort}`;
  compressions.set(key, (compressions.get(key) ?? 0) + 1);
}
