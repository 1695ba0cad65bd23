import { EngineError, type BinMap, type RecordEngine } from '../../lib/engine/port';
import { StorageError, TxNotFoundError, UtxoStateError } from '../../lib/domain/errors';
import type { StoreContext } from '../../lib/store/context';
import { callUdf, callUdfBatch, callUdfOk, toUdfResponse, udfError } from '../../lib/store/udf-call';

function ctxWith(engine: Partial<RecordEngine>): StoreContext {
  return {
    engine: engine as RecordEngine,
    blobs: {} as never,
    signals: {} as never,
    settings: {
      utxoBatchSize: 4,
      blockHeightRetention: 10,
      maxTxSizeInStore: 1000,
      externalizeAll: false,
      coinbaseMaturity: 100,
    },
    moduleName: 'utxo_test',
    now: () => 0,
    tip: async () => 0,
  };
}

describe('toUdfResponse', () => {
  test('reads status, codes, signal, block ids (bigint too), child count and per-item errors', () => {
    const spendingData = Buffer.alloc(36, 1);
    const map: BinMap = {
      status: 'ERROR',
      errorCode: 'SPENT',
      message: 'spent',
      signal: 'DAHSET',
      blockIDs: [1, BigInt(2)],
      childCount: BigInt(3),
      errors: {
        '0': { errorCode: 'SPENT', message: 'already spent', spendingData },
        '2': { errorCode: 'FROZEN', message: 'frozen' },
      },
    };
    expect(toUdfResponse(map)).toEqual({
      status: 'ERROR',
      errorCode: 'SPENT',
      message: 'spent',
      signal: 'DAHSET',
      blockIDs: [1, 2],
      childCount: 3,
      errors: {
        '0': { errorCode: 'SPENT', message: 'already spent', spendingData },
        '2': { errorCode: 'FROZEN', message: 'frozen' },
      },
    });
  });

  test('an unknown error code reads as INVALID_PARAMETER; anything but OK is an error', () => {
    expect(toUdfResponse({ status: 'ERROR', errorCode: 'WHAT' })).toEqual({
      status: 'ERROR',
      errorCode: 'INVALID_PARAMETER',
    });
    expect(toUdfResponse({ status: 'weird' }).status).toBe('ERROR');
    expect(toUdfResponse({ status: 'OK' })).toEqual({ status: 'OK' });
  });
});

describe('udfError', () => {
  test('TX_NOT_FOUND -> TxNotFoundError; other codes -> UtxoStateError with details', () => {
    expect(udfError({ status: 'ERROR', errorCode: 'TX_NOT_FOUND' }, { txid: 'ab' })).toBeInstanceOf(TxNotFoundError);
    const e = udfError({ status: 'ERROR', errorCode: 'LOCKED', message: 'locked' }, { txid: 'ab', vout: 1 });
    expect(e).toBeInstanceOf(UtxoStateError);
    expect(e).toMatchObject({ code: 'LOCKED', message: 'locked', details: { txid: 'ab', vout: 1 } });
  });
});

describe('callUdf / callUdfOk / callUdfBatch', () => {
  test('passes module, function and arguments; returns the response', async () => {
    const apply = jest.fn(async () => ({ status: 'OK', signal: 'ALLSPENT' }) as BinMap);
    const ctx = ctxWith({ apply });
    await expect(callUdf(ctx, Buffer.from('k'), 'spend', [1, true], {})).resolves.toEqual({
      status: 'OK',
      signal: 'ALLSPENT',
    });
    expect(apply).toHaveBeenCalledWith(Buffer.from('k'), { module: 'utxo_test', fn: 'spend', args: [1, true] });
  });

  test('engine failures are StorageError; callUdfOk throws the typed UDF error', async () => {
    const failing = ctxWith({ apply: async () => Promise.reject(new EngineError('TIMEOUT', 'slow')) });
    await expect(callUdf(failing, Buffer.from('k'), 'spend', [], { txid: 'ab' })).rejects.toBeInstanceOf(StorageError);
    const erroring = ctxWith({ apply: async () => ({ status: 'ERROR', errorCode: 'FROZEN', message: 'frozen' }) });
    await expect(callUdfOk(erroring, Buffer.from('k'), 'freeze', [], { txid: 'ab' })).rejects.toMatchObject({
      code: 'FROZEN',
    });
  });

  test('batch: one outcome per item; a failed item carries a StorageError; a failed batch throws', async () => {
    const ctx = ctxWith({
      batchApply: async () => [
        { ok: true, result: { status: 'OK' } },
        { ok: false, error: new EngineError('UNAVAILABLE', 'gone') },
      ],
    });
    const out = await callUdfBatch(ctx, [
      { key: Buffer.from('a'), fn: 'spend', args: [] },
      { key: Buffer.from('b'), fn: 'spend', args: [] },
    ]);
    expect(out[0]).toEqual({ ok: true, response: { status: 'OK' } });
    expect(out[1].ok).toBe(false);
    expect(!out[1].ok && out[1].error).toBeInstanceOf(StorageError);
    await expect(callUdfBatch(ctx, [])).resolves.toEqual([]);
    const broken = ctxWith({ batchApply: async () => Promise.reject(new Error('down')) });
    await expect(callUdfBatch(broken, [{ key: Buffer.from('a'), fn: 'spend', args: [] }])).rejects.toMatchObject({
      code: 'STORAGE_ERROR',
    });
  });
});
