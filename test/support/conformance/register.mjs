// Loaded with `node --import` before @modelcontextprotocol/conformance, whose bundle imports `globSync`
// from `fs` (Node 22 and later) at load time, for its report commands only: on Node 20, the machine's
// and CI's Node, it would not load at all. Its `fs` becomes fs-glob-shim.mjs (node:fs plus the `glob`
// package's globSync); nothing else is touched.
import { register } from 'node:module';

register(new URL('./hooks.mjs', import.meta.url));
