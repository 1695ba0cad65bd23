/**
 * The batched operations' contract on the embedded engine (':memory:'), a FileBlobStore in a temp dir, and an
 * InlineQueue whose handler is the Reconciler.
 */
import { embeddedTarget } from './contract-target';
import { describeBatchContract } from './batch-contract';

describeBatchContract('embedded engine', () => embeddedTarget('batch-contract'));
