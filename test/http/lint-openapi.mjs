// Lints the OpenAPI document read from stdin with Redocly's linter (@redocly/openapi-core, the engine of
// `redocly lint`, ESM only: jest's CommonJS runtime cannot load it, so the test runs this script with node).
// Prints the problems as JSON: [{ ruleId, severity, message }].
import { createConfig, lintFromString } from '@redocly/openapi-core';

let source = '';
for await (const chunk of process.stdin) source += chunk;
const config = await createConfig({ extends: ['recommended'] });
const problems = await lintFromString({ source, absoluteRef: '/openapi.json', config });
process.stdout.write(
  JSON.stringify(problems.map((p) => ({ ruleId: p.ruleId, severity: p.severity, message: p.message }))),
);
