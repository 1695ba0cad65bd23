/**
 * The store contract on the embedded engine (':memory:'), a FileBlobStore in a temp dir, and an InlineQueue whose
 * handler is the Reconciler.
 */
import { embeddedTarget } from './contract-target';
import { describeStoreContract } from './store-contract';

describeStoreContract('embedded engine', () => embeddedTarget('store-contract'));
