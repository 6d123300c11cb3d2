import { setFlagsFromString } from 'node:v8';

/** The V8 settings the service runs with (see {@link applyHeapPolicy}). */
export const HEAP_FLAGS = ['--no-allocation-site-pretenuring'] as const;

/**
 * Sets {@link HEAP_FLAGS} in this process. main.ts imports this module before any other, so that it holds
 * from the first young collection (module loading makes some) wherever the service is started (`npm start`,
 * `node dist/main.js`, the image), which a command-line flag would not; V8 reads it whenever it collects.
 *
 * V8 allocates objects straight into the old generation when most objects of the same allocation site
 * lived through a young collection once ("pretenuring"). Under load, the objects a request makes are still
 * in use at a young collection often enough (ten requests in flight) for V8 to decide so for sites such as
 * the response's headers, the request and the caller; from then on every request's objects were old-space
 * garbage, and only a full collection frees them (docs/performance.md, "Pretenuring off"). What
 * pretenuring saves is copying a long-lived object once more before it is promoted: the uncached and export
 * figures of `npm run bench` were measured with it off.
 */
export function applyHeapPolicy(): void {
  for (const flag of HEAP_FLAGS) setFlagsFromString(flag);
}

applyHeapPolicy();
