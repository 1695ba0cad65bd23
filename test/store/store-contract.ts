/**
 * The store contract: every operation of docs/operations.md and its errors, run unchanged on any RecordEngine.
 * `describeStoreContract(name, makeDeps)`: makeDeps returns fresh, empty ports (a new ':memory:' engine, or a new
 * Aerospike set) and a queue whose handler the suite sets to the Reconciler.
 *
 * The harness is contract-harness.ts; the parts: contract-create.ts, contract-spend.ts, contract-admin.ts,
 * contract-edges.ts.
 */
import { contractTools, type MakeDeps } from './contract-harness';
import { describeCreateContract } from './contract-create';
import { describeSpendContract } from './contract-spend';
import { describeAdminContract } from './contract-admin';
import { describeEdgeContract } from './contract-edges';

export { BASE_SETTINGS, codeOf, type ContractTarget, type Harness, type MakeDeps } from './contract-harness';

export function describeStoreContract(name: string, makeDeps: MakeDeps): void {
  const tools = contractTools(makeDeps);
  describe(`UtxoStore contract: ${name}`, () => {
    describeCreateContract(tools);
    describeSpendContract(tools);
    describeAdminContract(tools);
    describeEdgeContract(tools);
  });
}
