import { EngineError } from '../../lib/engine/port';
import { AS_STATUS, engineCodeOf, mapAerospikeError } from '../../lib/engine/aerospike';

/** An error shaped like the client's AerospikeError (code, message, inDoubt). */
function asError(code: number, message = `status ${code}`, inDoubt = false) {
  return Object.assign(new Error(message), { name: 'AerospikeError', code, inDoubt });
}

describe('mapAerospikeError', () => {
  test("the client's own 'Not connected.' (ERR_CLIENT) is UNAVAILABLE; other ERR_CLIENT errors stay UNKNOWN", () => {
    expect(mapAerospikeError(asError(AS_STATUS.ERR_CLIENT, 'Not connected.'), 'query').code).toBe('UNAVAILABLE');
    expect(mapAerospikeError(asError(AS_STATUS.ERR_CLIENT, 'Invalid client configuration')).code).toBe('UNKNOWN');
  });

  test.each([
    [AS_STATUS.ERR_RECORD_EXISTS, 'RECORD_EXISTS'],
    [AS_STATUS.ERR_RECORD_NOT_FOUND, 'RECORD_NOT_FOUND'],
    [AS_STATUS.ERR_RECORD_GENERATION, 'GENERATION_MISMATCH'],
    [AS_STATUS.ERR_RECORD_TOO_BIG, 'RECORD_TOO_BIG'],
    [AS_STATUS.ERR_UDF, 'UDF_ERROR'],
    [AS_STATUS.ERR_UDF_NOT_FOUND, 'UDF_ERROR'],
    [AS_STATUS.ERR_LUA_FILE_NOT_FOUND, 'UDF_ERROR'],
    [AS_STATUS.ERR_TIMEOUT, 'TIMEOUT'],
    [AS_STATUS.ERR_QUERY_TIMEOUT, 'TIMEOUT'],
    [AS_STATUS.ERR_MAX_RETRIES_EXCEEDED, 'TIMEOUT'],
    [AS_STATUS.NO_RESPONSE, 'TIMEOUT'],
    [AS_STATUS.ERR_CONNECTION, 'UNAVAILABLE'],
    [AS_STATUS.ERR_CLUSTER, 'UNAVAILABLE'],
    [AS_STATUS.ERR_CLUSTER_CHANGE, 'UNAVAILABLE'],
    [AS_STATUS.ERR_NO_MORE_CONNECTIONS, 'UNAVAILABLE'],
    [AS_STATUS.ERR_SERVER_FULL, 'UNAVAILABLE'],
    [AS_STATUS.ERR_DEVICE_OVERLOAD, 'UNAVAILABLE'],
    [AS_STATUS.ERR_RECORD_BUSY, 'UNAVAILABLE'],
    [AS_STATUS.ERR_INVALID_NODE, 'UNAVAILABLE'],
    [AS_STATUS.ERR_PARAM, 'INVALID'],
    [AS_STATUS.ERR_REQUEST_INVALID, 'INVALID'],
    [AS_STATUS.ERR_BIN_NAME, 'INVALID'],
    [AS_STATUS.ERR_BIN_INCOMPATIBLE_TYPE, 'INVALID'],
    [AS_STATUS.ERR_NAMESPACE_NOT_FOUND, 'INVALID'],
    [AS_STATUS.ERR_ENTERPRISE_ONLY, 'INVALID'],
    [AS_STATUS.ERR_INDEX_NOT_FOUND, 'INVALID'],
    [AS_STATUS.ERR_SERVER, 'UNKNOWN'],
    [AS_STATUS.ERR_CLIENT, 'UNKNOWN'],
    [9999, 'UNKNOWN'],
  ])('status %i -> %s', (status, code) => {
    const err = mapAerospikeError(asError(status));
    expect(err).toBeInstanceOf(EngineError);
    expect(err.code).toBe(code);
    expect(engineCodeOf(status)).toBe(code);
  });

  test('the message names the operation, the client message and the status; the cause is kept', () => {
    const original = asError(AS_STATUS.ERR_UDF, 'UDF: Execution Error 1: utxo.lua:12: attempt to index nil');
    const err = mapAerospikeError(original, 'apply utxo_1.spend on ab01');
    expect(err.message).toBe(
      'aerospike apply utxo_1.spend on ab01: UDF: Execution Error 1: utxo.lua:12: attempt to index nil (status 100)',
    );
    expect(err.cause).toBe(original);
  });

  test('in-doubt writes say so', () => {
    const err = mapAerospikeError(asError(AS_STATUS.ERR_TIMEOUT, 'Timeout', true), 'update 00');
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toBe('aerospike update 00: Timeout (status 9, in doubt)');
  });

  test('an EngineError passes through unchanged', () => {
    const e = new EngineError('RECORD_EXISTS', 'exists');
    expect(mapAerospikeError(e, 'create')).toBe(e);
  });

  test('errors without a status: TypeError is INVALID, anything else UNKNOWN', () => {
    expect(mapAerospikeError(new TypeError('Key must be a Buffer')).code).toBe('INVALID');
    const unknown = mapAerospikeError('boom', 'get');
    expect(unknown.code).toBe('UNKNOWN');
    expect(unknown.message).toBe('aerospike get: boom');
    expect(mapAerospikeError(Object.assign(new Error('x'), { code: 'ECONNRESET' })).code).toBe('UNKNOWN');
  });

  test('the status numbers agree with the installed client (Aerospike.status)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const status = require('aerospike').status as Record<string, number>;
    for (const [name, value] of Object.entries(AS_STATUS)) {
      expect([name, status[name]]).toEqual([name, value]);
    }
  });
});
