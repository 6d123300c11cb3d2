// @ts-check
'use strict';
// Rounds: every measurement of `npm run bench` alternates Drey and its floor, round after round, and its
// figure is the median over rounds. The machine's speed drifts by 10 to 20% over tens of seconds (other
// tenants, measured in issue 26's runs), so a single pair would compare two different machines; a floor
// that moves by more than 10% between rounds means the machine did, and the measurement is redone.

/** @param {number[]} values */
function median(values) {
  const finite = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (finite.length === 0) return NaN;
  const middle = Math.floor(finite.length / 2);
  return finite.length % 2 === 1 ? finite[middle] : (finite[middle - 1] + finite[middle]) / 2;
}

/**
 * How far apart a floor's rounds are, as a fraction of their median: (max − min) / median.
 * @param {number[]} values
 */
function spread(values) {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length < 2) return 0;
  const middle = median(finite);
  if (!(middle > 0)) return Infinity;
  return (Math.max(...finite) - Math.min(...finite)) / middle;
}

/** `a` as a share of `b` (a ratio), NaN when either is missing or `b` is zero. @param {number} a @param {number} b */
function ratio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN;
}

/**
 * The median over rounds of each round's own ratio. Drey and its floor run minutes apart only across
 * rounds, seconds apart within one: a round's ratio cancels most of the machine's drift, where the ratio
 * of two medians can pair Drey's fast round with its floor's slow one.
 * @template R
 * @param {R[]} rounds
 * @param {(round: R) => number} numerator
 * @param {(round: R) => number} denominator
 */
function medianRatio(rounds, numerator, denominator) {
  return median(rounds.map((round) => ratio(numerator(round), denominator(round))));
}

/**
 * Whether to run one more round: the floor's figures over the last `rounds` rounds spread by more than
 * `tolerance`, and redos are left.
 * @param {number[]} floorValues the floor's figure in every round so far, oldest first
 * @param {{ rounds: number, tolerance: number, redos: number, maxRedos: number }} limits
 */
function needsRedo(floorValues, { rounds, tolerance, redos, maxRedos }) {
  if (floorValues.length < rounds || redos >= maxRedos) return false;
  return spread(floorValues.slice(-rounds)) > tolerance;
}

/**
 * Runs `round` `rounds` times, then again while the floor of the last `rounds` moved by more than
 * `tolerance` (at most `maxRedos` more times). Returns the last `rounds` rounds, the ones the figures
 * come from, with how many were redone and the floor's spread over them.
 * @template R
 * @param {{ rounds: number, tolerance?: number, maxRedos?: number, floor: (result: R) => number,
 *   round: (index: number) => Promise<R>, label?: string }} options
 */
async function inRounds({ rounds, tolerance = 0.1, maxRedos = 2, floor, round, label }) {
  /** @type {R[]} */
  const results = [];
  let redos = 0;
  for (let index = 0; index < rounds; index++) results.push(await round(index));
  while (
    needsRedo(
      results.map((result) => floor(result)),
      { rounds, tolerance, redos, maxRedos },
    )
  ) {
    redos++;
    if (label) {
      const moved = spread(results.slice(-rounds).map((result) => floor(result)));
      console.log(
        `${label}: floor moved ${Math.round(moved * 100)}% between rounds, redo ${redos}`,
      );
    }
    results.push(await round(results.length));
  }
  const kept = results.slice(-rounds);
  return { kept, redos, spread: spread(kept.map((result) => floor(result))) };
}

module.exports = { median, spread, ratio, medianRatio, needsRedo, inRounds };
