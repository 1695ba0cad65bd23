import { lessIdle } from '../../bench/capacity/asd-cpu';
import { asdPids, CLOCK_TICKS_PER_SECOND, parseProcessCpuUs, processCpuUs } from '../../bench/capacity/proc';
import { parseArgs } from '../../bench/capacity/slope';

test('a process CPU is utime + stime of /proc/<pid>/stat, counted from the last parenthesis', () => {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
  const stat = '4242 (asd (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 60 0';
  expect(parseProcessCpuUs(stat)).toBe(((250 + 50) * 1e6) / CLOCK_TICKS_PER_SECOND);
  expect(parseProcessCpuUs('no parenthesis here')).toBeUndefined();
  expect(parseProcessCpuUs('1 (x) S 1 2')).toBeUndefined();
});

test('this process reads its own CPU; a process that is not there reads undefined', () => {
  expect(processCpuUs(process.pid)).toBeGreaterThanOrEqual(0);
  expect(processCpuUs(2 ** 22 + 1)).toBeUndefined();
});

test('BENCH_ASD_PIDS is a comma list of process ids; anything else is refused naming it', () => {
  expect(asdPids({})).toEqual([]);
  expect(asdPids({ BENCH_ASD_PIDS: ' 12, 13 ' })).toEqual([12, 13]);
  expect(() => asdPids({ BENCH_ASD_PIDS: '12,x' })).toThrow(/BENCH_ASD_PIDS/);
  expect(() => asdPids({ BENCH_ASD_PIDS: '0' })).toThrow(/BENCH_ASD_PIDS/);
});

test("the nodes' idle share of a stretch's wall time is taken off its CPU, never below zero", () => {
  // 40 us of idle CPU per ms over 1000 ms: 40,000 us off
  expect(lessIdle(1_000_000, 1_500_000, 1000, 40)).toBe(460_000);
  expect(lessIdle(0, 10, 1000, 40)).toBe(0);
  expect(lessIdle(undefined, 10, 1000, 40)).toBeUndefined();
});

test("the slope check's flags, with the harness's defaults (prefix cap, subnet 10.23.0)", () => {
  expect(parseArgs([])).toMatchObject({ nodes: [2, 3], clients: [1, 3], rf: 2, prefix: 'cap', subnet: '10.23.0' });
  expect(parseArgs(['--nodes', '3', '--clients', '1,4', '--rf', '3', '--exec', 'true'])).toMatchObject({
    nodes: [3],
    clients: [1, 4],
    rf: 3,
    exec: 'true',
  });
  expect(() => parseArgs(['--nodes'])).toThrow(/value is missing/);
  expect(() => parseArgs(['--bogus', '1'])).toThrow(/unknown flag/);
});
