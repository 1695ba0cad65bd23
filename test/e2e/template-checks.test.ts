/**
 * The template checks of scripts/e2e/template-checks.ts on the app's template (no problem) and on mutated copies of it (each
 * mutation is reported): a variable the stack names differently from what the runtime reads, a variable dropped, a
 * route integrated with the wrong function or not wired, and a bundle requiring a module that is neither bundled nor
 * in the layer. Synthesis without bundling (test/cdk/helpers.ts); the real bundles are checked in
 * test/cdk/bundling.test.ts and by `npm run e2e`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { StackArtifact } from '../../scripts/e2e/assembly';
import { standIns } from '../../scripts/e2e/stand-ins';
import {
  checkEnvironment,
  checkModules,
  checkRoutes,
  environmentReadSet,
  LAMBDA_DEFAULTED,
  requiredModules,
} from '../../scripts/e2e/template-checks';
import { gatewayAliasId, logicalId, synth, type Synth } from '../cdk/helpers';

let s: Synth;
let stacks: StackArtifact[];
const reads = environmentReadSet();

beforeAll(() => {
  s = synth();
  stacks = [
    { name: s.cluster.stackName, template: s.clusterTemplate.toJSON() as StackArtifact['template'] },
    { name: s.stack.stackName, template: s.template.toJSON() as StackArtifact['template'] },
  ];
});

const local = (st: StackArtifact[]) =>
  standIns({ stacks: st }, { sqsUrlHost: 'http://127.0.0.1:1', aerospikeHosts: '127.0.0.1:3000' });

/** A deep copy of the stacks with `edit` applied to the service template. */
function mutated(edit: (t: StackArtifact['template']) => void): StackArtifact[] {
  const copy = JSON.parse(JSON.stringify(stacks)) as StackArtifact[];
  edit(copy[1].template);
  return copy;
}

function variablesOf(t: StackArtifact['template'], prefix: string): Record<string, unknown> {
  const id = Object.keys(t.Resources).find(
    (k) => k.startsWith(prefix) && t.Resources[k].Type === 'AWS::Lambda::Function',
  )!;
  return (t.Resources[id].Properties!.Environment as { Variables: Record<string, unknown> }).Variables;
}

describe('environment', () => {
  test('the read set is derived from the code: the configuration parser, the UDF loader, Powertools', () => {
    expect(reads.config).toEqual(
      expect.arrayContaining(['UTXO_STORE', 'BLOB_STORE', 'SIGNAL_QUEUE', 'UTXO_BATCH_SIZE']),
    );
    expect(reads.udf).toEqual(['UTXO_UDF_PATH']);
    expect(reads.caller).toEqual(['API_CALLER_ROLES']);
    expect(reads.powertools).toEqual(
      expect.arrayContaining(['POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_METRICS_NAMESPACE']),
    );
    // every defaulted variable is one the parser reads (a stale entry would hide nothing, but would mislead)
    for (const k of Object.keys(LAMBDA_DEFAULTED)) expect([k, reads.config.includes(k)]).toEqual([k, true]);
  });

  test("every function's variables are read, every read variable is set or defaulted on purpose", () => {
    expect(checkEnvironment(stacks, local(stacks), reads)).toEqual([]);
  });

  test('a variable named differently from what the runtime reads is reported twice (unread, and missing)', () => {
    const st = mutated((t) => {
      const vars = variablesOf(t, 'FunctionsSpend');
      vars.SIGNAL_QUEUE_URL = vars.SIGNAL_QUEUE;
      delete vars.SIGNAL_QUEUE;
    });
    const problems = checkEnvironment(st, local(st), reads);
    expect(problems).toEqual(
      expect.arrayContaining([
        'spend: sets SIGNAL_QUEUE_URL, which nothing in the function reads',
        expect.stringMatching(/^spend: lacks SIGNAL_QUEUE, which the configuration parser reads/),
        'spend: SIGNAL_QUEUE is not an SQS queue',
      ]),
    );
    expect(problems.every((p) => p.startsWith('spend:'))).toBe(true);
  });

  test('a dropped setting and a dropped UDF path are reported', () => {
    const st = mutated((t) => {
      delete variablesOf(t, 'FunctionsCleanup').BLOCK_HEIGHT_RETENTION;
      delete variablesOf(t, 'FunctionsGetUtxo').UTXO_UDF_PATH;
    });
    expect(checkEnvironment(st, local(st), reads)).toEqual([
      expect.stringMatching(/^getUtxo: lacks UTXO_UDF_PATH/),
      expect.stringMatching(/^cleanup: lacks BLOCK_HEIGHT_RETENTION/),
    ]);
  });

  test('a reference without a local stand-in, and a value that does not parse, are reported', () => {
    const st = mutated((t) => {
      const logGroup = Object.keys(t.Resources).find((k) => t.Resources[k].Type === 'AWS::Logs::LogGroup')!;
      variablesOf(t, 'FunctionsCreate').BLOB_STORE = { Ref: logGroup };
      variablesOf(t, 'FunctionsGetA').UTXO_BATCH_SIZE = 'many';
    });
    const problems = checkEnvironment(st, local(st), reads);
    expect(problems).toEqual([
      expect.stringMatching(/^create: .*AWS::Logs::LogGroup.*has no local stand-in/),
      expect.stringMatching(/^get: its environment does not parse: UTXO_BATCH_SIZE/),
    ]);
  });
});

describe('routes', () => {
  test("every route of the handlers' table is a method integrated with the function that serves it", () => {
    expect(checkRoutes(stacks, local(stacks))).toEqual([]);
  });

  test('a method integrated with the wrong function is reported', () => {
    const st = mutated((t) => {
      const spends = logicalId(s.template, 'AWS::ApiGateway::Method', 'Apiv1spendsPOST');
      // the integrations name each function's gateway alias
      const create = gatewayAliasId(s.template, 'create');
      const spend = gatewayAliasId(s.template, 'spend');
      const integration = t.Resources[spends].Properties!.Integration as { Uri: unknown };
      integration.Uri = JSON.parse(JSON.stringify(integration.Uri).split(spend).join(create));
    });
    expect(checkRoutes(st, local(st))).toEqual([
      'POST /v1/spends: integrated with create, but served by the spend handler',
    ]);
  });

  test('a route without its method is reported', () => {
    const st = mutated((t) => {
      delete t.Resources[logicalId(s.template, 'AWS::ApiGateway::Method', 'Apiv1minedPOST')];
    });
    expect(checkRoutes(st, local(st))).toEqual(['POST /v1/mined: no method in the REST API']);
  });
});

describe('modules', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'module-check-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function files(root: string, entries: Record<string, string>): string {
    for (const [name, text] of Object.entries(entries)) {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), text);
    }
    return root;
  }

  test('requires by name are found; relative paths and builtins are not modules to resolve', () => {
    const bundle = files(path.join(dir, 'names'), {
      'x.js': '',
      'index.js':
        'require("aerospike");require("./x");require("fs");require("node:path");require(`@aws-sdk/client-s3`);',
    });
    expect(requiredModules(path.join(bundle, 'index.js'))).toEqual(['@aws-sdk/client-s3', 'aerospike']);
  });

  test('a file of the bundle that the asset lacks is reported', () => {
    const task = files(path.join(dir, 'lacking'), { 'index.js': 'require("./chunk.js")' });
    expect(checkModules({ get: task }, path.join(dir, 'no-layer'))).toEqual([
      expect.stringMatching(/^get: .*Could not resolve "\.\/chunk\.js"/),
    ]);
  });

  test('a module neither bundled nor in the layer is reported; one in the layer or never loaded is not', () => {
    // a node_modules beside the task root (as the repository's would be) must not count: Lambda has none there
    files(path.join(dir, 'repo'), {
      'node_modules/left-pad/package.json': '{"main":"i.js"}',
      'node_modules/left-pad/i.js': '',
    });
    const task = files(path.join(dir, 'repo', 'task'), {
      'index.js': 'require("aerospike");require("left-pad");require("@aws-sdk/client-s3");require("better-sqlite3")',
    });
    const layer = files(path.join(dir, 'layer'), {
      'nodejs/node_modules/aerospike/package.json': '{"main":"lib/aerospike.js"}',
      'nodejs/node_modules/aerospike/lib/aerospike.js': '',
    });
    // spend never uses S3 (its bundle leaves the client out) nor the embedded engine
    expect(checkModules({ spend: task }, layer)).toEqual([
      'spend: its bundle requires left-pad, which is neither in the bundle nor in the layer',
    ]);
    // create uses S3: an unbundled S3 client is a problem there
    expect(checkModules({ create: task }, layer)).toEqual([
      'create: its bundle requires @aws-sdk/client-s3, which is neither in the bundle nor in the layer',
      'create: its bundle requires left-pad, which is neither in the bundle nor in the layer',
    ]);
    rmSync(path.join(layer, 'nodejs/node_modules/aerospike'), { recursive: true });
    expect(checkModules({ spend: task }, layer)).toEqual([
      'spend: its bundle requires aerospike, which is neither in the bundle nor in the layer',
      'spend: its bundle requires left-pad, which is neither in the bundle nor in the layer',
    ]);
  });
});
