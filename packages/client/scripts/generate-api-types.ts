/**
 * `npm run generate -w @bsv-utxo-store/client`: writes src/generated/api-types.ts from the server's route table and
 * schemas (scripts/api-types.ts). With --check it writes nothing and fails when the committed file differs.
 */
import { readFileSync, writeFileSync } from 'fs';
import * as path from 'path';
import { renderApiTypes } from './api-types';

export const API_TYPES_FILE = path.join(__dirname, '..', 'src', 'generated', 'api-types.ts');

async function main(): Promise<void> {
  const text = await renderApiTypes();
  const relative = path.relative(process.cwd(), API_TYPES_FILE);
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(API_TYPES_FILE, 'utf8');
    } catch {
      // missing: reported below as out of date
    }
    if (committed !== text) {
      console.error(`${relative} is out of date with the server's routes and schemas: run npm run generate`);
      process.exitCode = 1;
      return;
    }
    console.log(`${relative} is up to date`);
    return;
  }
  writeFileSync(API_TYPES_FILE, text);
  console.log(`wrote ${relative}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
