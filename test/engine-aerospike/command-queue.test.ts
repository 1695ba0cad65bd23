/**
 * The client's process-wide command queue: set up from the settings before the first client exists, so that commands
 * beyond the connection pool wait instead of failing with "Max node/event loop ... async connections would be
 * exceeded" (status -7); a full queue (ERR_ASYNC_QUEUE_FULL, -11) is a retryable 503 STORAGE_ERROR. A fake of the
 * native module records the order of calls; on a real cluster the engine contract runs 64 applies in flight.
 */
import { loadConfig } from '../../lib/domain/config';
import {
  AerospikeEngine,
  AS_STATUS,
  commandQueuePolicy,
  connectAerospike,
  connectClient,
} from '../../lib/engine/aerospike';
import { EngineError } from '../../lib/engine/port';
import { mapError } from '../../lib/http/errors';
import { createUtxoStore } from '../../lib/store/utxo-store';
import { FileBlobStore } from '../../lib/blob';
import { InlineQueue } from '../../lib/signals';
import { BASE_SETTINGS } from '../store/store-contract';
import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';

const calls: string[] = [];
const policies: unknown[] = [];
const modules = ['x.lua'];
let applyAnswer: () => Promise<unknown> = async () => ({});

function fakeClient() {
  return {
    config: { policies: {} },
    connect: async () => {
      calls.push('connect');
    },
    infoAny: async (cmd: string) => (cmd === 'namespaces' ? 'namespaces\ttest;utxo' : 'status\tok'),
    infoAll: async () => [{ info: `udf-list\t${modules.map((f) => `filename=${f},hash=1,type=LUA`).join(';')}` }],
    udfRegister: async (file: string) => {
      modules.push(path.basename(file));
      return { wait: async () => undefined };
    },
    apply: () => applyAnswer(),
    put: async () => undefined,
    get: async () => {
      throw Object.assign(new Error('not found'), { code: AS_STATUS.ERR_RECORD_NOT_FOUND });
    },
    close: () => undefined,
  };
}

jest.mock('../../lib/engine/aerospike/native', () => {
  const real = jest.requireActual('aerospike') as Record<string, unknown>;
  const fake = {
    ...real,
    setupGlobalCommandQueue: (policy: unknown) => {
      calls.push('setupGlobalCommandQueue');
      policies.push(policy);
    },
    client: () => {
      calls.push('client');
      return fakeClient();
    },
  };
  return { loadAerospike: () => fake };
});

describe('command queue settings', () => {
  test('defaults: as many commands in process as connections per node, a bounded queue', () => {
    const config = loadConfig({});
    const budgets = { commandTimeoutMs: 1000, batchTimeoutMs: 5000 };
    expect(config.aerospike).toEqual({
      maxConnsPerNode: 32,
      maxCommandsInProcess: 32,
      maxCommandsInQueue: 4096,
      strongConsistency: false,
      ...budgets,
    });
    expect(
      loadConfig({ AEROSPIKE_MAX_CONNS_PER_NODE: '100', AEROSPIKE_MAX_COMMANDS_IN_QUEUE: '50' }).aerospike,
    ).toEqual({
      maxConnsPerNode: 100,
      maxCommandsInProcess: 100,
      maxCommandsInQueue: 50,
      strongConsistency: false,
      ...budgets,
    });
  });

  test('command budgets: AEROSPIKE_COMMAND_TIMEOUT_MS and AEROSPIKE_BATCH_TIMEOUT_MS, refused outside their range', () => {
    const config = loadConfig({ AEROSPIKE_COMMAND_TIMEOUT_MS: '2500', AEROSPIKE_BATCH_TIMEOUT_MS: '9000' });
    expect(config.aerospike).toMatchObject({ commandTimeoutMs: 2500, batchTimeoutMs: 9000 });
    expect(() => loadConfig({ AEROSPIKE_COMMAND_TIMEOUT_MS: '0' })).toThrow(/^AEROSPIKE_COMMAND_TIMEOUT_MS:/);
    expect(() => loadConfig({ AEROSPIKE_BATCH_TIMEOUT_MS: 'x' })).toThrow(/^AEROSPIKE_BATCH_TIMEOUT_MS:/);
  });

  test('more commands in process than connections per node is refused, naming the variable', () => {
    expect(() => loadConfig({ AEROSPIKE_MAX_COMMANDS_IN_PROCESS: '33' })).toThrow(
      /^AEROSPIKE_MAX_COMMANDS_IN_PROCESS: must not exceed AEROSPIKE_MAX_CONNS_PER_NODE \(32\)/,
    );
    expect(() => loadConfig({ AEROSPIKE_MAX_COMMANDS_IN_QUEUE: '0' })).toThrow(/^AEROSPIKE_MAX_COMMANDS_IN_QUEUE:/);
    expect(() =>
      commandQueuePolicy({ hosts: 'a', namespace: 'n', commandQueue: { maxCommandsInProcess: 40 } }),
    ).toThrow(/maxCommandsInProcess must be an integer from 5 \(the client's minimum\) to maxConnsPerNode \(32\)/);
    // the C client refuses 1 to 4 when the first client connects (as_event.c as_event_validate_policy)
    expect(() =>
      commandQueuePolicy({ hosts: 'a', namespace: 'n', maxConnsPerNode: 4, commandQueue: { maxCommandsInProcess: 4 } }),
    ).toThrow(/maxCommandsInProcess must be an integer from 5/);
  });
});

describe('a failed connect', () => {
  // issue 31: with AEROSPIKE_MAX_COMMANDS_IN_PROCESS=1 the client's connect failed ("max_commands_in_process 1 must
  // be 0 or >= 5"), and close() then threw "Event loop is not initialized right now", which start-up reported instead
  test('is reported with its own error even when closing the client throws', async () => {
    const closed: string[] = [];
    const client = {
      connect: () => {
        throw Object.assign(
          new Error('Unable to register default event loop: max_commands_in_process 1 must be 0 or >= 5 [-1]'),
          { code: -1 },
        );
      },
      close: () => {
        closed.push('close');
        throw new Error('Event loop is not initialized right now');
      },
    };
    const err = await connectClient(client, 'h1:3000').catch((e: unknown) => e);
    expect(closed).toEqual(['close']);
    expect(err).toBeInstanceOf(EngineError);
    expect((err as Error).message).toMatch(/connect h1:3000.*max_commands_in_process 1 must be 0 or >= 5/);
    expect((err as Error).message).not.toMatch(/Event loop is not initialized/);
  });
});

describe('connecting sets up the queue first', () => {
  test('the queue is set up once, before the first client is created; other limits later are INVALID', async () => {
    const options = {
      hosts: 'h1:3000',
      namespace: 'utxo',
      maxConnsPerNode: 64,
      commandQueue: { maxCommandsInProcess: 48, maxCommandsInQueue: 1000 },
    };
    await connectAerospike(options);
    expect(calls).toEqual(['setupGlobalCommandQueue', 'client', 'connect']);
    expect(policies).toEqual([{ maxCommandsInProcess: 48, maxCommandsInQueue: 1000 }]);

    await connectAerospike(options);
    expect(calls.filter((c) => c === 'setupGlobalCommandQueue')).toHaveLength(1);

    await expect(
      connectAerospike({ ...options, commandQueue: { maxCommandsInProcess: 10, maxCommandsInQueue: 1000 } }),
    ).rejects.toMatchObject({ code: 'INVALID', message: expect.stringMatching(/process-wide/) });
  });
});

describe('a full command queue', () => {
  test('ERR_ASYNC_QUEUE_FULL and ERR_NO_MORE_CONNECTIONS are 503 STORAGE_ERROR through the store', async () => {
    const client = await connectAerospike({
      hosts: 'h1',
      namespace: 'utxo',
      maxConnsPerNode: 64,
      commandQueue: { maxCommandsInProcess: 48, maxCommandsInQueue: 1000 },
    });
    const engine = new AerospikeEngine({ client, namespace: 'utxo', set: 's' });
    const store = await createUtxoStore({
      engine,
      blobs: new FileBlobStore({ dir: mkdtempSync(path.join(tmpdir(), 'queue-full-')) }),
      signals: new InlineQueue(),
      settings: BASE_SETTINGS,
    });
    for (const [status, text] of [
      [AS_STATUS.ERR_ASYNC_QUEUE_FULL, 'Async command delay queue is full.'],
      [AS_STATUS.ERR_NO_MORE_CONNECTIONS, 'Max node/event loop async connections would be exceeded: 32'],
    ] as const) {
      applyAnswer = async () => {
        throw Object.assign(new Error(text), { code: status });
      };
      const err = await store.setLocked(['ab'.repeat(32)], true).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeDefined();
      const mapped = mapError(err);
      expect([status, mapped.statusCode, mapped.body.error.code]).toEqual([status, 503, 'STORAGE_ERROR']);
    }
  });
});
