/**
 * Capacity (issue 48): the capacity model's table for 10,000, 100,000 and 1,000,000 block txs a second
 * (bench/capacity/model.ts on the measured inputs of bench/capacity/inputs.ts), printed as the markdown of
 * docs/performance.md. Runs only when selected (BENCH_ONLY=capacity); no engine, nothing measured here.
 */
import { plan } from '../capacity/model';
import { CAPACITY_INPUTS, RUNS, TARGET_RATES } from '../capacity/inputs';
import { capacityTable } from '../capacity/table';
import { registerBench, type BenchRow } from '../registry';

export async function benchCapacity(): Promise<BenchRow[]> {
  console.log(capacityTable(CAPACITY_INPUTS, TARGET_RATES));
  console.log(`\ninputs: ${Object.values(RUNS).join('; ')}\nprices: ${CAPACITY_INPUTS.prices.source}\n`);
  return TARGET_RATES.map((rate) => {
    const ce = plan(CAPACITY_INPUTS, rate, 'community');
    const ee = plan(CAPACITY_INPUTS, rate, 'enterprise');
    return {
      section: 'capacity',
      measure: `${rate} block txs/s`,
      ops: rate,
      ms: 0,
      opsPerSec: rate,
      note:
        `CE ${ce.fits ? 'fits' : 'does not fit'}: ${ce.nodes} x ${ce.instance.name}, first limit ${ce.limits[0].name}; ` +
        `EE ${ee.nodes} x ${ee.instance.name} (${ee.binds} binds), $${ee.cost.total.toFixed(2)}/h, ` +
        `$${ee.cost.perMillionTxs.toFixed(3)} per million txs`,
    };
  });
}

if ((process.env.BENCH_ONLY ?? '').includes('capacity')) registerBench('capacity', benchCapacity);
