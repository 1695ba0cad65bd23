/** Single-record writes are sent again only when the client says they were not sent (inDoubt false) and transient. */
import { AS_STATUS } from '../../lib/engine/aerospike';
import fc from 'fast-check';
import {
  BUSY_MAX_DELAY_MS,
  busyDelayMs,
  isNotSentTransient,
  retryBusy,
  retryBusyItems,
  retryNotSent,
} from '../../lib/engine/aerospike/retry';

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

test('busy backoff: full jitter under a cap that doubles from the first delay up to the maximum', () => {
  fc.assert(
    fc.property(fc.nat(40), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, r) => {
      const d = busyDelayMs(attempt, { random: () => r });
      const cap = Math.min(BUSY_MAX_DELAY_MS, 2 * 2 ** Math.min(attempt, 20));
      return Number.isInteger(d) && d >= 0 && d <= cap;
    }),
  );
  expect(busyDelayMs(0, { random: () => 0.999 })).toBe(2);
  expect(busyDelayMs(30, { random: () => 0.999 })).toBe(BUSY_MAX_DELAY_MS);
});

test('retryBusy: busy is sent again within the budget, the total wait never exceeds it; other errors at once', async () => {
  let clock = 0;
  const o = { budgetMs: 50, now: () => clock, sleep: async (ms: number) => void (clock += ms), random: () => 1 };
  let calls = 0;
  const busy = () => (calls++, Promise.reject(asError(AS_STATUS.ERR_RECORD_BUSY, false)));
  await expect(retryBusy(busy, o)).rejects.toMatchObject({ code: AS_STATUS.ERR_RECORD_BUSY });
  expect(clock).toBeLessThan(50);
  expect(calls).toBeGreaterThan(3);

  calls = 0;
  const other = () => (calls++, Promise.reject(asError(AS_STATUS.ERR_RECORD_EXISTS, false)));
  await expect(retryBusy(other, o)).rejects.toMatchObject({ code: AS_STATUS.ERR_RECORD_EXISTS });
  expect(calls).toBe(1);
});

test('retryBusyItems: only busy items are sent again; every other answer is kept where it was', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.nat(5), { minLength: 1, maxLength: 30 }), async (busyRounds) => {
      // item i answers busy for its first busyRounds[i] sends
      const sent = busyRounds.map(() => 0);
      let clock = 0;
      const results = await retryBusyItems(
        busyRounds.map((_, i) => i),
        async (items) => items.map((i) => (++sent[i] <= busyRounds[i] ? { i, busy: true } : { i, busy: false })),
        (r) => r.busy,
        { budgetMs: 10_000, now: () => clock, sleep: async (ms) => void (clock += ms) },
      );
      return results.every((r, i) => r.i === i && !r.busy && sent[i] === busyRounds[i] + 1);
    }),
  );
});
