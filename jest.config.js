/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // ts-jest transpiles TypeScript (type checking is `npm run typecheck`), and also the ESM-only @middy packages
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
  transformIgnorePatterns: ['/node_modules/(?!(@middy)/)'],
  // the client workspace package from its sources (packages/client), whose relative imports name the .js they build to
  moduleNameMapper: {
    '^@bsv-utxo-store/client$': '<rootDir>/packages/client/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testTimeout: 30000,
};
