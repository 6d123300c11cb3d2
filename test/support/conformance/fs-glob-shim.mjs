// `fs` with `globSync` (Node 22), for @modelcontextprotocol/conformance on Node 20: see register.mjs.
export * from 'node:fs';
export { default } from 'node:fs';
export { globSync } from 'glob';
