import { costPerMillionTxs, MB_PER_VCPU, PRICES } from '../../bench/sections/scale/cost';

test('below one vCPU a CPU second is billed as the time it takes at the memory size’s share of a vCPU', () => {
  // 500 us of CPU per tx at 1024 MB: 0.5 s per 1000 txs, taking 0.5 * 1769/1024 s at 1024/1769 of a vCPU
  const c = costPerMillionTxs({ cpuUsPerTx: 500, memoryMb: 1024, requestsPerTx: 1 / 1000, viaApi: true });
  expect(c.durationSecondsPerTx).toBeCloseTo((500e-6 * MB_PER_VCPU) / 1024, 12);
  expect(c.lambdaDuration).toBeCloseTo(500 * (MB_PER_VCPU / 1024) * PRICES.lambdaGbSecondX86, 9);
  // 1000 requests per million txs
  expect(c.lambdaRequests).toBeCloseTo(1000 * 0.2e-6, 12);
  expect(c.apiGateway).toBeCloseTo(1000 * 3.5e-6, 12);
  expect(c.total).toBeCloseTo(c.lambdaDuration + c.lambdaRequests + c.apiGateway, 12);
});

test('at or above one vCPU the duration is the CPU time, billed at the memory configured', () => {
  const at = (memoryMb: number) => costPerMillionTxs({ cpuUsPerTx: 100, memoryMb, requestsPerTx: 0, viaApi: false });
  expect(at(MB_PER_VCPU).durationSecondsPerTx).toBeCloseTo(100e-6, 12);
  expect(at(2 * MB_PER_VCPU).lambdaDuration).toBeCloseTo(2 * at(MB_PER_VCPU).lambdaDuration, 12);
  // below one vCPU the memory size does not change what a CPU second costs
  expect(at(512).lambdaDuration).toBeCloseTo(at(1024).lambdaDuration, 12);
});

test('a scheduled invocation pays no API Gateway request; a bad memory size is refused naming it', () => {
  expect(costPerMillionTxs({ cpuUsPerTx: 1, memoryMb: 1024, requestsPerTx: 1, viaApi: false }).apiGateway).toBe(0);
  expect(() => costPerMillionTxs({ cpuUsPerTx: 1, memoryMb: 0, requestsPerTx: 1, viaApi: true })).toThrow(/memoryMb/);
});
