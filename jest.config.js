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
  // the package's subpath export, as a consumer imports it (package.json "exports")
  moduleNameMapper: { '^bsv-utxo-store/client$': '<rootDir>/lib/client/index.ts' },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testTimeout: 30000,
};
