import { busyShare, machineShare, parseProcStat, roundByRound } from '../../bench/sections/scale/round-figures';

test("each round's replay time over the same round's block time, rounds only one side ran left out", () => {
  expect(roundByRound([10_000, 8_000, 12_000], [7_400, 8_000, 6_000])).toBe('x0.74 / x1 / x0.5');
  // three block rounds, two replayed (BENCH_SCALE_REPLAY_ROUNDS=2), and the other way round
  expect(roundByRound([10_000, 8_000, 12_000], [7_000, 6_000])).toBe('x0.7 / x0.75');
  expect(roundByRound([10_000], [7_000, 6_000, 5_000])).toBe('x0.7');
  expect(roundByRound([], [])).toBe('');
});

test("a process's CPU (us, every thread) over the phase's wall time (ms), above 100 % when threads add up", () => {
  expect(busyShare(8_900_000, 10_000)).toBe('89 %');
  expect(busyShare(12_100_000, 10_000)).toBe('121 %');
  expect(busyShare(0, 10_000)).toBe('0 %');
});

test("the machine's busy and total ticks from /proc/stat's cpu line (idle and iowait not busy, steal in neither)", () => {
  const stat = 'cpu  100 5 50 800 20 3 2 10 0 0\ncpu0 50 2 25 400 10 1 1 5 0 0\nintr 1 2 3\n';
  expect(parseProcStat(stat)).toEqual({ busy: 160, total: 980 });
  expect(parseProcStat('intr 1 2 3\n')).toBeUndefined();
  expect(parseProcStat('cpu  a b c d e\n')).toBeUndefined();
});

test("the machine's busy share between two readings, 'n/a' without two readings that moved", () => {
  expect(machineShare({ busy: 100, total: 1000 }, { busy: 280, total: 1200 })).toBe('90 %');
  expect(machineShare(undefined, { busy: 1, total: 2 })).toBe('n/a');
  expect(machineShare({ busy: 1, total: 2 }, { busy: 1, total: 2 })).toBe('n/a');
});
