// @ts-check
'use strict';
// `npm start`: runs the built service (dist/main.js), compiling first only when dist/ is missing or older
// than the sources (scripts/ensure-built.js). The service runs in this very process (no child to forward
// signals to), as `node dist/main.js` would. package.json runs it with `exec`: npm's shell would otherwise
// stand between, and npm forwards SIGTERM and SIGINT to its child only, the shell, which died of them and
// left the service running without a parent.
const { ensureBuilt, MAIN } = require('./ensure-built');

ensureBuilt('npm start');
require(MAIN);
