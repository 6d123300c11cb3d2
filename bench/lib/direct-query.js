// @ts-check
'use strict';
// The uncached phase's statements as Drey compiles them, and one run of such a statement as Drey runs it
// per request, without HTTP, auth, parameters or caching: shared by bench/direct-duckdb.js (the phase's
// floor) and bench/lib/floor-variant.js (bench/uncached-cpu.js's), so both measure the same work.
const { compileDataset } = require('../../dist/engine/compile');
const { duckdbParameters } = require('../../dist/engine/duckdb/duckdb-binds');
const { selection } = require('./selections');

const ANONYMOUS = { username: null, isAdmin: false, fields: {} };

/**
 * orders_summary compiled for the i-th selection of the uncached phase.
 * @param {unknown} project a project loaded by Drey's project-loader
 * @param {number} i
 */
function summaryStatement(project, i) {
  const chosen = selection(i);
  const selections = {
    order_regions: {
      widget: 'multi_select',
      selected: chosen.regions.map((id) => ({ id, label: id, fields: {} })),
    },
    order_dates: { widget: 'date_range', start: chosen.start, end: chosen.end },
  };
  return compileDataset(project, 'orders_summary', { selections, caller: ANONYMOUS });
}

/**
 * As Drey runs a dataset's query per request (src/engine/duckdb/duckdb-query.ts): on a connection kept
 * from one query to the next (Environment.withConnection keeps idle ones), a prepared statement with its
 * bound values, run materialized, every row taken from the result's chunks (readMaterialized), with no
 * further task of the driver's thread pool. Opening a connection and fetching each chunk with a task of its
 * own, as this loop first did, queued those tasks behind the running queries: its latencies spread (the
 * median 0.83 to 0.91 of the mean) while Drey's did not.
 * @param {import('@duckdb/node-api').DuckDBConnection} connection
 * @param {{ sql: string, binds: unknown[] }} statement
 */
async function runDirect(connection, { sql, binds }) {
  const prepared = await connection.prepare(sql);
  try {
    const { values, types } = duckdbParameters(binds);
    prepared.bind(values, types);
    const result = await prepared.run();
    for (let index = 0; index < result.chunkCount; index++) result.getChunk(index).getRows();
  } finally {
    prepared.destroySync();
  }
}

module.exports = { ANONYMOUS, summaryStatement, runDirect };
