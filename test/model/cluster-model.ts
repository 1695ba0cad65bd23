/**
 * A runnable model of the partition-safety protocol (issue 44): 3 Aerospike CE nodes, their watchdogs and
 * check-start, store processes with their partition maps and the spend acknowledgement guard, in discrete time
 * (TICK_MS). Pure: no network, no clock, no randomness except the scenario's seed. One record with a few outputs.
 *
 * What each server behaviour stands for (aerospike-server 8.1.2 as read in the safety review of 2026-11-29 and in
 * decision 0007), and the modelling choices, are said by the module that models it: scenario.ts (the parameters),
 * record.ts (the merge), model-state.ts (nodes, processes, network), clustering.ts, node-lifecycle.ts (watchdog and
 * check-start), spend-writes.ts (the spend UDF and replica writes), clients.ts (discovery, tends, the guard).
 */
import { mergeCopies, type Copy } from './record';
import { type Ack } from './model-state';
import { Clients } from './clients';
import { OUTPUTS, SETTLE_MS, TICK_MS, type Rules, type Scenario } from './scenario';

export interface Outcome {
  acks: Ack[];
  final: Copy | null;
  converged: boolean;
  /** outputs acknowledged to two spenders */
  doubleAcked: number[];
  /** acknowledged spends not in the final record */
  lost: Ack[];
  /** the record (created and acknowledged before the faults) has no copy left */
  createLost: boolean;
  /** spends neither acknowledged nor answered SPENT by the time their processes stopped */
  unfinished: number;
  /** what happened, when run with tracing */
  trace: string[];
}

/** A running simulation of one scenario under one rule set. */
export class ClusterModel extends Clients {
  step(): void {
    this.links();
    for (const f of this.sc.faults) if (f.kind === 'kill' && f.at === this.t) this.kill(f.node, 'nemesis', f.downMs);
    this.lifecycle();
    this.heartbeats();
    this.clustering();
    this.watchdogs();
    this.clients();
    this.t += TICK_MS;
  }

  protected converged(): boolean {
    const k = this.nodes[0].view?.key;
    return k !== undefined && this.nodes.every((n, i) => this.running(i) && n.view?.key === k);
  }

  run(): Outcome {
    while (this.t < this.sc.endAt) this.step();
    const settleUntil = this.t + SETTLE_MS;
    while (this.t < settleUntil && !this.converged()) this.step();
    const converged = this.converged();
    // converged: every copy was merged into the one cluster; otherwise what every node holds, merged
    const final = mergeCopies(this.nodes.map((n) => n.copy));
    const doubleAcked: number[] = [];
    for (let o = 0; o < OUTPUTS; o++)
      if (new Set(this.acks.filter((a) => a.output === o).map((a) => a.spender)).size > 1) doubleAcked.push(o);
    const lost = this.acks.filter((a) => final?.spenders[a.output] !== a.spender);
    if (this.tracing)
      this.log(`end: ${converged ? 'converged' : 'NOT converged'}, final ${final ? this.show(final) : 'NO COPY'}`);
    const unfinished = this.workers.filter((w) => !w.done).length;
    return {
      acks: this.acks,
      final,
      converged,
      doubleAcked,
      lost,
      createLost: final === null,
      unfinished,
      trace: this.trace,
    };
  }
}

/** Runs a scenario under a rule set. */
export function simulate(sc: Scenario, rules: Rules, tracing = false): Outcome {
  return new ClusterModel(sc, rules, tracing).run();
}

/** Safe: no acknowledged spend lost, no output acknowledged to two spenders, the record not lost. */
export function safe(o: Outcome): boolean {
  return o.doubleAcked.length === 0 && o.lost.length === 0 && !o.createLost;
}

/** One line per violation, for a counterexample's report. */
export function violations(o: Outcome): string[] {
  const v: string[] = [];
  for (const out of o.doubleAcked)
    v.push(
      `output ${out} acknowledged to ${[...new Set(o.acks.filter((a) => a.output === out).map((a) => a.spender))].join(' and ')}`,
    );
  for (const a of o.lost) v.push(`acknowledged spend ${a.spender}${a.output} (at ${a.at} ms) not in the final record`);
  if (o.createLost) v.push('the record (an acknowledged create) has no copy left');
  return v;
}
