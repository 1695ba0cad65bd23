/**
 * The SQS-triggered signal consumer (partial batch failures, redeliveries) and the EventBridge-scheduled cleanup
 * (one pass within the remaining time), invoked with real-shaped events and a fake Lambda context.
 */
import './powertools-env';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { handler as cleanup, MARGIN_MS } from '../../functions/cleanup';
import { handler as signals } from '../../functions/signals';
import { BIN } from '../../lib/domain/bins';
import { masterKey, paginationKey } from '../../lib/domain/keys';
import { txidToBytes } from '../../lib/domain/txid';
import { getRuntime, resetRuntime } from '../../lib/runtime';
import { makeTx, rootTx } from '../fixtures/txs';
import { captureStdout, jsonLines, lambdaContext, scheduledEvent, sqsEvent } from './events';

const saved = { ...process.env };
let blobDir: string;

beforeAll(async () => {
  blobDir = mkdtempSync(path.join(tmpdir(), 'fn-signals-'));
  Object.assign(process.env, {
    UTXO_STORE: 'embedded::memory:',
    BLOB_STORE: `file:${blobDir}`,
    SIGNAL_QUEUE: 'inline',
    UTXO_BATCH_SIZE: '2',
  });
  await resetRuntime();
});

afterAll(async () => {
  await resetRuntime();
  process.env = saved;
  rmSync(blobDir, { recursive: true, force: true });
});

function metricValues(lines: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r of jsonLines(lines)) if (r._aws) Object.assign(out, r);
  return out;
}

describe('signals handler (SQS)', () => {
  test('reconciles valid signals; only malformed messages are returned as failures', async () => {
    const { store, engine } = await getRuntime();
    await store.setChainTip(999, { force: true });
    const parent = rootTx(3); // B = 2: a master and one pagination record
    await store.create(parent.hex);
    await store.setMined({ txids: [parent.txid], blockId: 1, blockHeight: 1000, subtreeIdx: 0 });
    const child = makeTx({
      inputs: [
        { parent, vout: 0 },
        { parent, vout: 1 },
        { parent, vout: 2 },
      ],
    });
    await store.spend({ tx: child.hex });
    const txid = txidToBytes(parent.txid, 'txid');
    const dah = (await engine.get(masterKey(txid), [BIN.deleteAtHeight]))?.bins[BIN.deleteAtHeight];
    expect(typeof dah).toBe('number');
    // the inline queue already reconciled; undo it on the pagination record as a lost signal would leave it
    expect((await engine.get(paginationKey(txid, 1), [BIN.deleteAtHeight]))?.bins[BIN.deleteAtHeight]).toBe(dah);
    await engine.update(paginationKey(txid, 1), { [BIN.deleteAtHeight]: null });
    expect((await engine.get(paginationKey(txid, 1), [BIN.deleteAtHeight]))?.bins[BIN.deleteAtHeight]).toBeUndefined();

    const body = JSON.stringify({ txid: parent.txid, signal: 'DAHSET', height: 1001 });
    const event = sqsEvent([
      { body, messageId: 'm-1' },
      { body, messageId: 'm-2', receiveCount: 2 },
      { body: 'not json', messageId: 'm-3' },
      { body: JSON.stringify({ txid: parent.txid, signal: 'NOPE', height: 1 }), messageId: 'm-4' },
      { body: JSON.stringify({ txid: rootTx(1).txid, signal: 'DAHUNSET', height: 5 }), messageId: 'm-5' },
    ]);
    const { result, lines } = await captureStdout(() => signals(event, lambdaContext()));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-3' }, { itemIdentifier: 'm-4' }] });
    expect((await engine.get(paginationKey(txid, 1), [BIN.deleteAtHeight]))?.bins[BIN.deleteAtHeight]).toBe(dah);
    expect(metricValues(lines)).toMatchObject({
      SignalsReceived: 5,
      SignalsHandled: 3,
      SignalsFailed: 2,
      SignalRedeliveries: 1,
    });

    // a redelivery of the whole batch changes nothing
    const before = await engine.batchGet([masterKey(txid), paginationKey(txid, 1)]);
    const { result: again } = await captureStdout(() => signals(event, lambdaContext()));
    expect(again.batchItemFailures).toHaveLength(2);
    const after = await engine.batchGet([masterKey(txid), paginationKey(txid, 1)]);
    expect(after.map((r) => r?.bins)).toEqual(before.map((r) => r?.bins));
  });

  test('a batch in which every message fails returns them all (no exception)', async () => {
    const event = sqsEvent([
      { body: '{}', messageId: 'a' },
      { body: JSON.stringify({ txid: 'XYZ', signal: 'DAHSET', height: 1 }), messageId: 'b' },
    ]);
    const { result } = await captureStdout(() => signals(event, lambdaContext()));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'b' }] });
  });

  test('a runtime that cannot start fails the invocation (the whole batch is retried)', async () => {
    await resetRuntime();
    process.env.SIGNAL_QUEUE = 'not-a-queue';
    const event = sqsEvent([{ body: JSON.stringify({ txid: rootTx(1).txid, signal: 'DAHSET', height: 1 }) }]);
    await expect(captureStdout(() => signals(event, lambdaContext()))).rejects.toThrow(/SIGNAL_QUEUE/);
    process.env.SIGNAL_QUEUE = 'inline';
    const { result } = await captureStdout(() => signals(event, lambdaContext()));
    expect(result).toEqual({ batchItemFailures: [] });
  });
});

describe('cleanup handler (EventBridge schedule)', () => {
  async function spentAndBuried() {
    const { store } = await getRuntime();
    const parent = rootTx(1);
    await store.setChainTip(899, { force: true });
    await store.create(parent.hex);
    await store.setMined({ txids: [parent.txid], blockId: 90, blockHeight: 900, subtreeIdx: 0 });
    await store.setChainTip(999, { force: true });
    const child = makeTx({ inputs: [{ parent, vout: 0 }] });
    await store.create(child.hex);
    await store.spend({ tx: child.hex });
    await store.setChainTip(1000, { force: true });
    await store.setMined({ txids: [child.txid], blockId: 101, blockHeight: 1001, subtreeIdx: 0 });
    await store.setChainTip(1289, { force: true });
    return { parent, child };
  }

  test('a pass with no time left stops at once and says more', async () => {
    await resetRuntime();
    const { parent } = await spentAndBuried();
    const { result } = await captureStdout(() => cleanup(scheduledEvent(), lambdaContext(MARGIN_MS - 1000)));
    expect(result).toMatchObject({ tip: 1289, deleted: 0, more: true });
    const { store } = await getRuntime();
    await expect(store.get(parent.txid)).resolves.toMatchObject({ txid: parent.txid });
  });

  test('one pass within the remaining time deletes the buried parent and emits metrics', async () => {
    const { parent, child } = await spentAndBuried();
    const { result, lines } = await captureStdout(() => cleanup(scheduledEvent(), lambdaContext(60_000)));
    expect(result).toMatchObject({ tip: 1289, errors: 0, more: false });
    expect(result.deleted).toBeGreaterThanOrEqual(1);
    const { store } = await getRuntime();
    await expect(store.get(parent.txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
    await expect(store.get(child.txid)).resolves.toMatchObject({ txid: child.txid });
    const values = metricValues(lines);
    expect(values.CleanupDeleted).toBe(result.deleted);
    expect(typeof values.CleanupDurationMs).toBe('number');
    const log = jsonLines(lines).find((r) => r.message === 'cleanup pass');
    expect(log).toMatchObject({ deleted: result.deleted, tip: 1289 });
  });

  test("a shard's constant input runs that shard: shards 0 and 1 of 2 together delete the parent", async () => {
    await resetRuntime();
    const { parent, child } = await spentAndBuried();
    const reports = [];
    for (const cleanupShard of [0, 1]) {
      const { result, lines } = await captureStdout(() =>
        cleanup({ cleanupShard, cleanupShards: 2 }, lambdaContext(60_000)),
      );
      expect(result).toMatchObject({ tip: 1289, errors: 0, more: false });
      expect(result.busy).toBeUndefined();
      const log = jsonLines(lines).find((r) => r.message === 'cleanup pass');
      expect(log).toMatchObject({ shard: { index: cleanupShard, count: 2 }, deleted: result.deleted });
      reports.push(result);
    }
    // the parent's master lives in one range, so in one shard
    expect(reports.map((r) => r.deleted).sort()).toEqual([0, 1]);
    const { store } = await getRuntime();
    await expect(store.get(parent.txid)).rejects.toMatchObject({ code: 'TX_NOT_FOUND' });
    await expect(store.get(child.txid)).resolves.toMatchObject({ txid: child.txid });
  });

  test('a malformed shard input is logged and thrown, and changes nothing', async () => {
    await resetRuntime();
    const { parent } = await spentAndBuried();
    const malformed: [unknown, RegExp][] = [
      [{ cleanupShard: 2, cleanupShards: 2 }, /malformed cleanup shard input/],
      [{ cleanupShard: '0', cleanupShards: 2 }, /malformed cleanup shard input/],
      [{ cleanupShards: 2 }, /malformed cleanup shard input/],
      [{ cleanupShard: 0 }, /malformed cleanup shard input/],
      [{ cleanupShard: 0, cleanupShards: 0 }, /malformed cleanup shard input/],
      [{ cleanupShard: -1, cleanupShards: 2 }, /malformed cleanup shard input/],
      // more shards than the pass has partition ranges (CLEANUP_PARTITION_RANGES, default 8)
      [{ cleanupShard: 0, cleanupShards: 9 }, /cleanup shard count must be an integer in \[1, 8\], got 9/],
    ];
    for (const [input, message] of malformed) {
      const { result, lines } = await captureStdout(() =>
        cleanup(input as Parameters<typeof cleanup>[0], lambdaContext(60_000)).then(
          () => new Error('no error'),
          (err: Error) => err,
        ),
      );
      expect(result.message).toMatch(message);
      const logged = jsonLines(lines).find((r) => r.level === 'ERROR');
      expect(JSON.stringify(logged)).toMatch(message);
      expect(jsonLines(lines).find((r) => r.message === 'cleanup pass')).toBeUndefined();
    }
    const { store } = await getRuntime();
    await expect(store.get(parent.txid)).resolves.toMatchObject({ txid: parent.txid });
  });
});
