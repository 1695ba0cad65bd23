/**
 * The reorg part of the store contract on the embedded engine (':memory:'), a FileBlobStore in a temp dir, and an
 * InlineQueue whose handler is the Reconciler.
 */
import { embeddedTarget } from './contract-target';
import { describeReorgContract } from './reorg-contract';

describeReorgContract('embedded engine', () => embeddedTarget('reorg-contract'));
