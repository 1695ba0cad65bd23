/**
 * The S3 blob store and the SQS queue are opened on their first use (lib/blob/lazy-blob-store.ts,
 * lib/signals/lazy-queue.ts), so a function that never touches a blob or never sends a signal never loads that AWS SDK
 * client; test/cdk/bundling.test.ts checks that such functions' bundles leave the client out and still load.
 */
import { LazyBlobStore } from '../../lib/blob/lazy-blob-store';
import type { BlobStore } from '../../lib/blob/port';
import { loadConfig } from '../../lib/domain/config';
import { buildRuntime } from '../../lib/runtime';
import { LazyQueue } from '../../lib/signals/lazy-queue';
import type { Signal, SignalQueue } from '../../lib/signals/port';
import { makeTx, rootTx } from '../fixtures/txs';

const TXID = 'ab'.repeat(32);

function recordingBlobStore(calls: string[]): BlobStore {
  return {
    kind: 'fake',
    put: async (txid, kind, data) => void calls.push(`put ${txid} ${kind} ${data.toString()}`),
    get: async (txid, kind) => (calls.push(`get ${txid} ${kind}`), Buffer.from('tx')),
    exists: async (txid, kind) => (calls.push(`exists ${txid} ${kind}`), true),
    delete: async (txid, kind) => (calls.push(`delete ${txid} ${kind}`), true),
    setDeleteAtHeight: async (txid, kind, h) => (calls.push(`setDAH ${txid} ${kind} ${h}`), true),
    getDeleteAtHeight: async (txid, kind) => (calls.push(`getDAH ${txid} ${kind}`), 7),
    ping: async () => void calls.push('ping'),
  };
}

describe('LazyBlobStore', () => {
  test('opens nothing until a call needs the store, then opens once and passes every call through', async () => {
    const calls: string[] = [];
    let opened = 0;
    const lazy = new LazyBlobStore('s3', () => (opened++, recordingBlobStore(calls)));
    expect([lazy.kind, lazy.isOpen, opened]).toEqual(['s3', false, 0]);

    await Promise.all([lazy.put(TXID, 'tx', Buffer.from('raw')), lazy.exists(TXID, 'outputs')]);
    expect(await lazy.get(TXID, 'tx')).toEqual(Buffer.from('tx'));
    expect(await lazy.delete(TXID, 'outputs')).toBe(true);
    expect(await lazy.setDeleteAtHeight(TXID, 'tx', 12)).toBe(true);
    expect(await lazy.getDeleteAtHeight(TXID, 'tx')).toBe(7);
    await lazy.ping();
    expect([lazy.isOpen, opened]).toEqual([true, 1]);
    expect(calls).toEqual([
      `put ${TXID} tx raw`,
      `exists ${TXID} outputs`,
      `get ${TXID} tx`,
      `delete ${TXID} outputs`,
      `setDAH ${TXID} tx 12`,
      `getDAH ${TXID} tx`,
      'ping',
    ]);
  });

  test('an open that fails rejects the call that needed it (never a synchronous throw), and the next call retries', async () => {
    let attempts = 0;
    const lazy = new LazyBlobStore('s3', () => {
      if (++attempts === 1) throw new Error("Cannot find module '@aws-sdk/client-s3'");
      return recordingBlobStore([]);
    });
    const first = lazy.get(TXID, 'tx');
    await expect(first).rejects.toThrow(/Cannot find module/);
    expect(lazy.isOpen).toBe(false);
    await expect(lazy.exists(TXID, 'tx')).resolves.toBe(true);
    expect([attempts, lazy.isOpen]).toEqual([2, true]);
  });
});

describe('LazyQueue', () => {
  const signal: Signal = { txid: TXID, signal: 'ALLSPENT', height: 5 };

  test('sending no signals opens nothing; the first signal opens the queue once', async () => {
    const sent: Signal[][] = [];
    let opened = 0;
    const inner: SignalQueue = { kind: 'fake', send: async (s) => void sent.push(s), ping: async () => undefined };
    const lazy = new LazyQueue('sqs', () => (opened++, inner));
    await lazy.send([]);
    expect([lazy.kind, lazy.isOpen, opened, sent]).toEqual(['sqs', false, 0, []]);
    await lazy.send([signal]);
    await lazy.send([signal, signal]);
    await lazy.ping();
    expect([lazy.isOpen, opened, sent]).toEqual([true, 1, [[signal], [signal, signal]]]);
  });

  test('an open that fails rejects the send, and the next send retries', async () => {
    let attempts = 0;
    const lazy = new LazyQueue('sqs', () => {
      if (++attempts === 1) throw new Error('no SQS client');
      return { kind: 'fake', send: async () => undefined, ping: async () => undefined };
    });
    await expect(lazy.send([signal])).rejects.toThrow('no SQS client');
    await expect(lazy.ping()).resolves.toBeUndefined();
    expect(attempts).toBe(2);
  });
});

test('a runtime configured for S3 and SQS opens neither for store calls that touch no blob and send no signal', async () => {
  const runtime = await buildRuntime(
    loadConfig({
      UTXO_STORE: 'embedded::memory:',
      BLOB_STORE: 's3://blobs-bucket/utxo',
      SIGNAL_QUEUE: 'https://sqs.eu-west-1.amazonaws.com/000000000000/signals',
      AWS_REGION: 'eu-west-1',
    }),
  );
  try {
    expect([runtime.blobs.kind, runtime.queue.kind]).toEqual(['s3', 'sqs']);
    await runtime.store.setChainTip(5);
    // a small tx (no blob), one of its two outputs spent (no signal: the tx is not fully spent), read back
    const parent = rootTx(2);
    await runtime.store.create(parent.hex);
    await runtime.store.spend({ tx: makeTx({ inputs: [{ parent, vout: 0 }] }).hex });
    expect(await runtime.store.getSpend({ txid: parent.txid, vout: 0 })).toMatchObject({ status: 'SPENT' });
    await runtime.cleanup.runPass();
    expect([(runtime.blobs as LazyBlobStore).isOpen, (runtime.queue as LazyQueue).isOpen]).toEqual([false, false]);
  } finally {
    await runtime.engine.close();
  }
});
