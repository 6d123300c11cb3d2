/**
 * Three tiers: unit specs beside the code (src/**\/*.spec.ts); in-process specs of the compiled application
 * on real Postgres and Redis (test/integration/*.int-spec.ts); end-to-end specs of server processes
 * (test/*.e2e-spec.ts). The last two use dist/, which `npm test` builds first. A fourth, run on its own by
 * `npm run test:container`: docker-compose.yml under Podman (test/container/*.container-spec.ts).
 */
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
};
const moduleNameMapper = { '^@/(.*)$': '<rootDir>/src/$1' };

module.exports = {
  testTimeout: 60000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/src'],
      testMatch: ['**/*.spec.ts'],
      transform,
      moduleNameMapper,
    },
    {
      displayName: 'integration',
      // Hands the specs Node's own require, which loads Nest's ES modules where Jest's loader cannot.
      testEnvironment: '<rootDir>/test/integration/native-require.environment.js',
      rootDir: __dirname,
      roots: ['<rootDir>/test/integration'],
      testMatch: ['**/*.int-spec.ts'],
      transform,
      moduleNameMapper,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.e2e-spec.ts'],
      transform,
      moduleNameMapper,
    },
    {
      displayName: 'container',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test/container'],
      testMatch: ['**/*.container-spec.ts'],
      transform,
      moduleNameMapper,
    },
  ],
};
