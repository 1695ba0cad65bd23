/** Single-record writes are sent again only when the client says they were not sent (inDoubt false) and transient. */
import { AS_STATUS } from '../../lib/engine/aerospike';
import { isNotSentTransient, retryNotSent } from '../../lib/engine/aerospike/retry';

function asError(code: number, inDoubt: boolean) {
  return Object.assign(new Error(`status ${code}`), { name: 'AerospikeError', code, inDoubt });
}

test('not sent and transient: connection errors, no connection, node gone, timeout before sending', () => {
  for (const code of [AS_STATUS.ERR_CONNECTION, AS_STATUS.ERR_NO_MORE_CONNECTIONS, AS_STATUS.ERR_TIMEOUT])
    expect(isNotSentTransient(asError(code, false))).toBe(true);
  // in doubt: the write may have applied; never sent again
  expect(isNotSentTransient(asError(AS_STATUS.ERR_TIMEOUT, true))).toBe(false);
  // answers of the server are not transient
  for (const code of [AS_STATUS.ERR_RECORD_EXISTS, AS_STATUS.ERR_RECORD_GENERATION, AS_STATUS.ERR_UDF])
    expect(isNotSentTransient(asError(code, false))).toBe(false);
  expect(isNotSentTransient(new Error('plain'))).toBe(false);
});

test('a not-sent failure is sent again (at most twice more); an in-doubt one is thrown at once', async () => {
  let calls = 0;
  const flaky = () => {
    calls++;
    return calls < 3 ? Promise.reject(asError(AS_STATUS.ERR_CONNECTION, false)) : Promise.resolve('ok');
  };
  await expect(retryNotSent(flaky, 2, 1)).resolves.toBe('ok');
  expect(calls).toBe(3);

  calls = 0;
  const always = () => {
    calls++;
    return Promise.reject(asError(AS_STATUS.ERR_CONNECTION, false));
  };
  await expect(retryNotSent(always, 2, 1)).rejects.toMatchObject({ code: AS_STATUS.ERR_CONNECTION });
  expect(calls).toBe(3);

  calls = 0;
  const inDoubt = () => {
    calls++;
    return Promise.reject(asError(AS_STATUS.ERR_TIMEOUT, true));
  };
  await expect(retryNotSent(inDoubt, 2, 1)).rejects.toMatchObject({ inDoubt: true });
  expect(calls).toBe(1);
});
