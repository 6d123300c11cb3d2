// @ts-check
'use strict';
// The second client of the tail measurement: downloads one export after another and throws the bytes away,
// until SIGTERM. Usage: node bench/export-loop.js <export URL> (BENCH_TOKEN in the environment). Prints
// `exporting` when the first export's response has begun, and `done <finished> <failed>` at the end (the
// export cut short by SIGTERM counts as neither).
const http = require('node:http');

const [url] = process.argv.slice(2);
let finished = 0;
let failed = 0;
let stopping = false;
/** @type {http.ClientRequest | undefined} */
let current;

/** One export, read to its end; resolves however it ends. */
function download() {
  return new Promise((resolve) => {
    current = http.get(
      /** @type {string} */ (url),
      { headers: { authorization: `Bearer ${process.env.BENCH_TOKEN ?? ''}` }, agent: false },
      (response) => {
        if (finished + failed === 0) process.stdout.write('exporting\n');
        response.resume();
        response.once('close', () => {
          if (!stopping) {
            if (response.statusCode === 200 && response.complete) finished++;
            else failed++;
          }
          resolve(undefined);
        });
      },
    );
    current.once('error', () => {
      if (!stopping) failed++;
      resolve(undefined);
    });
  });
}

process.once('SIGTERM', () => {
  stopping = true;
  current?.destroy();
});

void (async () => {
  while (!stopping) await download();
  process.stdout.write(`done ${finished} ${failed}\n`);
})();
