/**
 * AerospikeEngine's batch writes against a recording double of the client (engine-client-calls.test.ts has the rest):
 * the tombstone filter rides on the batch's policy, which is the configured batchParentWrite one.
 */
import { AS_STATUS } from '../../lib/engine/aerospike';
import { TOMBSTONE_BIN } from '../../lib/engine/port';

import { engineWith } from './fake-client';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const Aerospike = require('aerospike');

const KEY = Buffer.from('aa'.repeat(32), 'hex');

test('batchRemove / batchUpdate: the batch policy with the filter is the configured batchParentWrite one', async () => {
  const configured = { totalTimeout: 7000, socketTimeout: 7000, maxRetries: 0 };
  const { engine, callsOf } = engineWith({
    config: { policies: { batchParentWrite: configured } },
    batchWrite: [{ status: AS_STATUS.OK, record: { bins: {} } }],
  });
  await engine.batchRemove([{ key: KEY }]);
  await engine.batchUpdate([{ key: KEY, bins: { a: 1 } }]);
  for (const call of callsOf('batchWrite')) {
    expect(call.args[1]).toEqual({
      ...configured,
      filterExpression: Aerospike.exp.not(Aerospike.exp.binExists(TOMBSTONE_BIN)),
    });
  }
  expect(callsOf('batchWrite')).toHaveLength(2);
});
