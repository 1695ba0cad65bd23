/**
 * The client package's generated API types stay what the server's route table and schemas render (an API change
 * not carried into the client fails here: run `npm run generate -w @bsv-utxo-store/client`), and the client's
 * sources import nothing of the server and no zod, so the published package is self-contained.
 * (test/client/generated-types-equal.ts checks at compile time that the rendered types equal zod's.)
 */
import { execFile } from 'child_process';
import { readdirSync, readFileSync } from 'fs';
import * as path from 'path';
import { promisify } from 'util';

const ROOT = path.join(__dirname, '..', '..');
const SRC = path.join(ROOT, 'packages', 'client', 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

describe('the client package', () => {
  test('src/generated/api-types.ts is what the route table and schemas render now', async () => {
    // the generator in its own process (prettier, which formats its output, loads its parsers by dynamic import)
    const tsx = path.join(ROOT, 'node_modules', '.bin', 'tsx');
    const run = promisify(execFile)(tsx, ['packages/client/scripts/generate-api-types.ts', '--check'], { cwd: ROOT });
    await expect(run).resolves.toMatchObject({ stdout: expect.stringContaining('is up to date') });
  }, 60_000);

  test('its sources import only each other, node built-ins and its declared dependencies', () => {
    const pkg = JSON.parse(readFileSync(path.join(SRC, '..', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    const allowed = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]);
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\(\s*)'([^']+)'/g)) {
        const spec = m[1];
        const ok = spec.startsWith('.')
          ? path.resolve(path.dirname(file), spec).startsWith(SRC + path.sep)
          : spec.startsWith('node:') || allowed.has(spec);
        if (!ok) offenders.push(`${path.relative(SRC, file)}: ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
    expect(allowed.has('zod')).toBe(false);
  });
});
