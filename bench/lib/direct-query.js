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
 * As Drey does per request: a connection, a prepared statement, the bound values, every row read.
 * @param {import('@duckdb/node-api').DuckDBInstance} instance
 * @param {{ sql: string, binds: unknown[] }} statement
 */
async function runDirect(instance, { sql, binds }) {
  const connection = await instance.connect();
  const prepared = await connection.prepare(sql);
  const { values, types } = duckdbParameters(binds);
  prepared.bind(values, types);
  (await prepared.runAndReadAll()).getRows();
  prepared.destroySync();
  connection.closeSync();
}

module.exports = { ANONYMOUS, summaryStatement, runDirect };
