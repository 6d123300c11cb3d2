// @ts-check
'use strict';
// Part of `prepare` (run by `npm ci`, after compiling): writes the embedded database's empty cluster under
// dist/pglite/, so that the first `npm start` copies it instead of running initdb. See
// src/database/embedded/pglite-template.ts.
const { writePgliteTemplate } = require('../dist/database/embedded/pglite-template');

const started = performance.now();
writePgliteTemplate().then(
  (path) => {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stdout.write(`embedded database template: ${path} (${seconds} s)\n`);
  },
  (error) => {
    // Not fatal: without the template, the first start runs initdb itself.
    process.stderr.write(`embedded database template not written: ${String(error)}\n`);
  },
);
