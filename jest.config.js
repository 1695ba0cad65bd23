/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // ts-jest transpiles TypeScript (type checking is `npm run typecheck`), and also the ESM-only @middy packages and
  // fauxqs (the tests' SQS and S3, scripts/e2e/aws-emulator.ts) with the ESM-only cookie its fastify's inject loads,
  // to CommonJS so that jest runs them on Node 20.
  transform: {
    '^.+\\.(t|j|mj)s$': [
      'ts-jest',
      {
        isolatedModules: true,
        tsconfig: { allowJs: true, rootDir: '.', module: 'commonjs', target: 'es2022', esModuleInterop: true },
      },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@middy|fauxqs|cookie)/)'],
  // the client workspace package from its sources (packages/client), whose relative imports name the .js they build to
  moduleNameMapper: {
    '^@bsv-utxo-store/client$': '<rootDir>/packages/client/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testTimeout: 30000,
};
