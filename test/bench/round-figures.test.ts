import { busyShare, roundByRound } from '../../bench/sections/scale/round-figures';

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
