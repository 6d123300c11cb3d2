// Jest's module loader cannot load ES-module-only packages (Nest 12, TypeORM 1, BullMQ 6) before Node 24.9,
// while Node 20's own require can (require(esm)). Jest loads this environment with Node's require, so the
// `require` of this file is native: it is handed to the specs, which load the compiled application (dist/)
// and its packages through it. Only the specs themselves go through Jest's loader.
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

class NativeRequireEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.nativeRequire = createRequire(join(config.projectConfig.rootDir, 'package.json'));
  }
}

module.exports = NativeRequireEnvironment;
