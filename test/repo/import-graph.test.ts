/**
 * The layers point down (README, Architecture): the import graph (import-graph.ts, the TypeScript parser) has no
 * circle, lib/ never reaches up into the entry points, the published client imports only itself, and the CDK app
 * takes from lib/ only what the deployment needs. Each rule is also shown failing on a tiny fixture graph.
 */
import * as path from 'path';
import {
  buildGraph,
  cycles,
  forbiddenImports,
  importsOutside,
  reachable,
  readTree,
  specifiersOf,
  type ForbiddenImport,
} from './import-graph';

const ROOT = path.resolve(__dirname, '../..');
const graph = buildGraph(readTree(ROOT, ['lib', 'packages', 'cdk', 'functions', 'server', 'scripts', 'bench', 'test']));

/** Where no import circle may be. */
const NO_CYCLES_IN = ['lib/', 'packages/', 'cdk/', 'functions/', 'server/'];

const ENTRY_POINTS = ['functions/', 'scripts/', 'bench/', 'cdk/', 'test/', 'server/'];

/** Who may not import whom. */
const RULES: ForbiddenImport[] = [
  { from: 'lib/', to: ENTRY_POINTS, why: 'lib/ is the library: the entry points import it, never the reverse' },
  {
    from: 'functions/',
    to: ['scripts/', 'bench/', 'cdk/', 'test/', 'server/'],
    why: 'a Lambda function bundles lib/ and itself only',
  },
  {
    from: 'packages/client/src/',
    to: ['lib/', ...ENTRY_POINTS, 'packages/client/scripts/'],
    why: 'the published client imports only its own sources (its API types are generated into it)',
  },
];

/**
 * What the CDK app (cdk/) may import from lib/: the settings it deploys with, the record size limit it sizes the
 * cluster by, the engine's name limits it validates the namespace and set against, the callers' roles and the route table (the handlers themselves are named by path, functions/<fn>.ts,
 * and bundled by esbuild, not imported).
 */
const CDK_MAY_IMPORT = [
  'lib/domain/config.ts',
  'lib/domain/engine-limits.ts',
  'lib/domain/record-size.ts',
  'lib/http/gateway-alias.ts',
  'lib/http/roles.ts',
  'lib/http/route-spec.ts',
  'lib/http/route-table.ts',
];

/** What the CDK app may never load, even through the modules above: the store's runtime (engine clients, AWS SDKs). */
const CDK_NEVER_REACHES = [
  'lib/engine/',
  'lib/store/',
  'lib/blob/',
  'lib/signals/',
  'lib/cleanup/',
  'lib/runtime.ts',
  'functions/',
];

const inScope = (file: string) => NO_CYCLES_IN.some((p) => file.startsWith(p));

describe('the import graph of the repository', () => {
  test('it is read: lib/, the functions and the CDK app are in it with their imports', () => {
    expect(graph.get('functions/admin.ts')).toContain('lib/http/middleware.ts');
    expect(graph.get('cdk/api.ts')).toContain('lib/http/route-table.ts');
    expect([...graph.keys()].filter((f) => f.startsWith('lib/')).length).toBeGreaterThan(50);
  });

  test(`no import circle in ${NO_CYCLES_IN.join(', ')}`, () => {
    expect(cycles(graph, inScope)).toEqual([]);
  });

  test('no import breaks a layer rule', () => {
    expect(forbiddenImports(graph, RULES)).toEqual([]);
  });

  test('cdk/ imports from lib/ only the allowed modules', () => {
    expect(importsOutside(graph, 'cdk/', 'lib/', CDK_MAY_IMPORT)).toEqual([]);
  });

  test("cdk/ never reaches the store's runtime, even indirectly", () => {
    const reached = [...reachable(graph, 'cdk/')].filter((f) => CDK_NEVER_REACHES.some((p) => f.startsWith(p)));
    expect(reached).toEqual([]);
  });
});

describe('the checks fail where they should (a fixture graph)', () => {
  const fixture = (files: Record<string, string>) => buildGraph(new Map(Object.entries(files)));

  test('every kind of import is an edge, type-only ones too; packages are not', () => {
    const text = [
      "import a from './a';",
      "import type { B } from './b';",
      "export * from './c';",
      "import d = require('./d');",
      "const e = require('./e');",
      "const f = import('./f');",
      "type G = typeof import('./g');",
      "import * as z from 'zod';",
    ].join('\n');
    expect(specifiersOf('x.ts', text)).toEqual(['./a', './b', './c', './d', './e', './f', './g', 'zod']);
    const files: Record<string, string> = { 'lib/x.ts': text };
    for (const n of 'abcdefg') files[`lib/${n}.ts`] = '';
    expect([...fixture(files).get('lib/x.ts')!].sort()).toEqual('abcdefg'.split('').map((n) => `lib/${n}.ts`));
  });

  test('a .js specifier names its .ts, a folder its index.ts', () => {
    const g = fixture({ 'p/a.ts': "import './b.js'; import './c';", 'p/b.ts': '', 'p/c/index.ts': '' });
    expect([...g.get('p/a.ts')!].sort()).toEqual(['p/b.ts', 'p/c/index.ts']);
  });

  test('a circle (through a type import) is found, and only inside the scope', () => {
    const g = fixture({
      'lib/store/types.ts': "import type { Report } from './verify';",
      'lib/store/verify.ts': "import { ctx } from './context';",
      'lib/store/context.ts': "import type { Store } from './types';",
      'lib/store/ok.ts': "import type { Store } from './types';",
      'test/a.ts': "import './b';",
      'test/b.ts': "import './a';",
      'lib/self.ts': "import './self';",
    });
    expect(cycles(g, inScope)).toEqual([
      ['lib/self.ts'],
      ['lib/store/context.ts', 'lib/store/types.ts', 'lib/store/verify.ts'],
    ]);
    expect(cycles(g)).toHaveLength(3);
  });

  test('lib/ importing an entry point breaks a rule; an entry point importing lib/ does not', () => {
    const g = fixture({
      'lib/http/local-server.ts': "const h = require('../../functions/create');",
      'functions/create.ts': "import '../lib/http/middleware';",
      'lib/http/middleware.ts': '',
      'packages/client/src/index.ts': "import '../../../lib/http/middleware';",
    });
    expect(forbiddenImports(g, RULES)).toEqual([
      `lib/http/local-server.ts -> functions/create.ts (${RULES[0].why})`,
      `packages/client/src/index.ts -> lib/http/middleware.ts (${RULES[2].why})`,
    ]);
  });

  test('cdk/ importing a lib/ module off the list, or reaching the runtime through one on it, is found', () => {
    const g = fixture({
      'cdk/api.ts': "import '../lib/http/route-table'; import '../lib/store/types';",
      'lib/http/route-table.ts': "import '../runtime';",
      'lib/runtime.ts': '',
      'lib/store/types.ts': '',
    });
    expect(importsOutside(g, 'cdk/', 'lib/', CDK_MAY_IMPORT)).toEqual(['cdk/api.ts -> lib/store/types.ts']);
    expect([...reachable(g, 'cdk/')].sort()).toEqual([
      'lib/http/route-table.ts',
      'lib/runtime.ts',
      'lib/store/types.ts',
    ]);
  });
});
