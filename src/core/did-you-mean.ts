import leven from 'leven';

/**
 * The one of `candidates` that `word` most likely misspells (`widgit` for `widget`, `strat_date` for
 * `start_date`), for a "did you mean" hint; undefined when none is close. Close means at most a third of
 * the word's letters changed (at least one), so that short words are not matched to anything.
 */
export function closestName(word: string, candidates: Iterable<string>): string | undefined {
  const most = Math.max(1, Math.floor(word.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    if (name === word) continue;
    const distance = leven(word.toLowerCase(), name.toLowerCase());
    if (distance <= most && (best === undefined || distance < best.distance)) {
      best = { name, distance };
    }
  }
  return best?.name;
}

/** `; did you mean "start_date"?`, or nothing: to end a message with. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const name = closestName(word, candidates);
  return name === undefined ? '' : `; did you mean "${name}"?`;
}
