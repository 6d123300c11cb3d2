// @ts-check
'use strict';
// Part of `prepare` and of the image's build: copies ReDoc's standalone bundle (one file) into dist/, so that
// redoc, with its React and styling dependencies (about 50 MB), is a development dependency only. The
// service falls back to the installed package when the copy is missing (src/openapi/redoc-page.ts).
const { copyFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');

const target = join(__dirname, '..', 'dist', 'openapi', 'redoc.standalone.js');
mkdirSync(join(target, '..'), { recursive: true });
copyFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), target);
