/**
 * The harness's availability figures (scripts/partition/availability.ts) over synthetic histories: the first
 * acknowledgement after the fault, the longest window without one, the share of outputs acknowledged within 30 s.
 */
import fc from 'fast-check';
import { availability, availabilityRow } from '../../scripts/partition/availability';
import { answerOf, type Answer, type SpendEvent } from '../../scripts/partition/history';
import { StorageError, UtxoStateError } from '../../lib/domain/errors';

const spend = (vout: number, start: number, end: number, answer: Answer, spender = `s${vout}`): SpendEvent => ({
  kind: 'spend',
  client: 'c1',
  mode: 'single',
  start,
  end,
  answer,
  spender,
  inputs: [{ txid: 'p', vout }],
});

test('a window of refusals around the fault: the gap, the first acknowledgement after it, the share within 30 s', () => {
  const h = [
    spend(0, 0, 10, 'ok'),
    spend(1, 3_900, 4_100, 'ok'), // sent before the fault, answered after it
    spend(2, 4_500, 5_000, 'in-doubt'),
    spend(2, 5_500, 14_000, 'ok'), // retried: acknowledged 9.5 s after first sent
    spend(3, 5_000, 5_100, 'refused', 'x'), // a rival's SPENT is not an acknowledgement
    spend(4, 6_000, 6_100, 'in-doubt'), // never acknowledged
    spend(5, 14_500, 50_000, 'ok'), // too late for 30 s
  ];
  const a = availability(h, 4_000);
  expect(a.firstAckAfterFaultMs).toBe(10_000);
  expect(a.longestGapMs).toBe(36_000);
  expect(a.longestGapFromMs).toBe(14_000);
  expect(a.gaps).toEqual([
    { fromMs: 4_100, toMs: 14_000 },
    { fromMs: 14_000, toMs: 50_000 },
  ]);
  expect(a.outputs).toBe(6);
  expect(a.ackedWithin30s).toBeCloseTo(3 / 6);
  expect(a.slowestAckMs).toBe(35_500);
  expect(availabilityRow(a)).toEqual({
    'first ack after fault (s)': '10.0',
    'longest without ack (s)': '36.0',
    'acked within 30 s': '50.0%',
    'slowest output (s)': '35.5',
  });
});

test('what the spends answered inside the longest window: the guard class, else the error code', () => {
  const refusal = (vout: number, start: number, end: number, reason?: string, code = 'STORAGE_ERROR'): SpendEvent => ({
    ...spend(vout, start, end, 'in-doubt'),
    code,
    ...(reason ? { reason } : {}),
  });
  const h = [
    spend(0, 0, 4_000, 'ok'),
    refusal(1, 4_100, 5_000, 'unfenced'),
    refusal(2, 4_200, 6_000, 'unfenced'),
    refusal(3, 4_300, 7_000), // no class: the engine's own error
    refusal(4, 8_000, 9_000, 'changed'),
    { ...spend(5, 8_500, 9_100, 'refused'), code: 'SPENT' },
    spend(6, 9_000, 12_000, 'ok'),
    refusal(7, 12_100, 12_500, 'changed'), // after the window
  ];
  const a = availability(h, 4_000);
  expect(a.longestGapMs).toBe(8_000);
  expect(a.longestGapAnswers).toEqual({ unfenced: 2, STORAGE_ERROR: 1, changed: 1, SPENT: 1 });
});

test('no acknowledgement after the fault: none, and the gap runs to the last answer', () => {
  const a = availability([spend(0, 0, 100, 'ok'), spend(1, 5_000, 9_000, 'in-doubt')], 4_000);
  expect(a.firstAckAfterFaultMs).toBeNull();
  expect(a.longestGapMs).toBe(5_000);
  expect(availabilityRow(a)['first ack after fault (s)']).toBe('none');
});

test('the longest gap bounds every window between acknowledgements after the fault, and the share is a fraction', () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ start: fc.nat(60_000), took: fc.nat(5_000), ok: fc.boolean(), vout: fc.nat(20) })),
      fc.nat(30_000),
      (items, fault) => {
        const h = items.map((i) => spend(i.vout, i.start, i.start + i.took, i.ok ? 'ok' : 'in-doubt'));
        const a = availability(h, fault);
        const acks = h
          .filter((e) => e.answer === 'ok' && e.end > fault)
          .map((e) => e.end)
          .sort((x, y) => x - y);
        for (let k = 1; k < acks.length; k++) expect(acks[k] - acks[k - 1]).toBeLessThanOrEqual(a.longestGapMs);
        if (acks.length > 0) expect(acks[0] - fault).toBeLessThanOrEqual(a.longestGapMs);
        expect(a.ackedWithin30s).toBeGreaterThanOrEqual(0);
        expect(a.ackedWithin30s).toBeLessThanOrEqual(1);
      },
    ),
  );
});

test('answerOf: what the worker records of an error, with the guard refusal class when there is one', () => {
  expect(answerOf(new StorageError('in doubt', { inDoubt: true, ackRefusal: 'unfenced' }))).toEqual({
    answer: 'in-doubt',
    code: 'STORAGE_ERROR',
    reason: 'unfenced',
  });
  expect(answerOf(new StorageError('engine timeout'))).toEqual({ answer: 'in-doubt', code: 'STORAGE_ERROR' });
  expect(answerOf(new UtxoStateError('SPENT', 'spent'))).toEqual({ answer: 'refused', code: 'SPENT' });
  expect(answerOf(new Error('socket hang up'))).toEqual({ answer: 'in-doubt', code: 'THROWN socket hang up' });
});
