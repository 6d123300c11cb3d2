// @ts-check
'use strict';
// The selections of the uncached phase: every request a date range (and a set of regions) not asked for
// before, so that neither Drey's cache nor DuckDB's own caches can answer it from an earlier request.

const REGIONS = ['North', 'South', 'East', 'West', 'Central'];
const FIRST_DAY = Date.UTC(2023, 0, 1);
const DAY_MS = 86_400_000;

/** @param {number} days */
function day(days) {
  return new Date(FIRST_DAY + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The i-th selection: a range of 120 to 419 days starting in 2023, and two to four regions. Distinct for
 * every i below 100,000 (the pair (start, length) differs), far more than a run makes.
 * @param {number} i
 */
function selection(i) {
  const start = (i * 7) % 311;
  const length = 120 + ((Math.floor(i / 311) * 13) % 300);
  const count = 2 + (i % 3);
  const regions = REGIONS.slice(0, 5).filter((_, index) => (index + i) % 5 < count);
  return { start: day(start), end: day(Math.min(start + length, 730)), regions };
}

/** @param {{ start: string, end: string, regions: string[] }} chosen */
function queryString(chosen) {
  const regions = chosen.regions.map((region) => `&order_regions=${region}`).join('');
  return `order_dates=${chosen.start}&order_dates=${chosen.end}${regions}`;
}

/**
 * The export phase's selection: every region (none selected) and the whole date range of the orders, so
 * an export reads every row of the table (ORDERS_ROWS, 1,000,000 in the bench). Drey gets it as a query
 * string, DuckDB's floor (bench/floor-duckdb-export.js) as the same selections compiled by Drey.
 */
const EXPORT_SELECTION = { start: '2023-01-01', end: '2024-12-31', regions: [] };

module.exports = { selection, queryString, EXPORT_SELECTION };
