/**
 * The parameters of the partition-safety model (issue 44): the deployment's timings, the rule sets compared, and a
 * scenario (the nemesis's faults, the store processes and their spends). Modelling choices are scenario parameters
 * where their value is not known.
 */
import { FENCE_MS as GUARD_FENCE_MS } from '../../lib/store/ack-guard';

export const NODES = 3;
export const MIN_CLUSTER_SIZE = 2;
export const OUTPUTS = 3;
export const TICK_MS = 50;
/** heartbeat interval 150 ms x timeout count 20 (the deployment's conf) */
export const HEARTBEAT_TIMEOUT_MS = 3000;
/** one clustering quantum */
export const QUANTUM_MS = 3300;
/** an orphan serves its old map for 5 quanta (exchange.c) */
export const ORPHAN_SERVE_MS = 5 * QUANTUM_MS;
/** the client's tend interval */
export const TEND_MS = 1000;
/** systemd's RestartSec after the watchdog's SIGKILL */
export const RESTART_MS = 1000;
/** G2: the guard's fence (lib/store/ack-guard.ts: an orphan's whole life, 17.5 s) */
export const FENCE_MS = GUARD_FENCE_MS;
/** CE flushes a node's write buffer to its device every flush-max-ms (1 s); a SIGKILL loses what was not flushed */
export const FLUSH_MS = 1000;
/** after the scenario, how long the healed cluster is given to converge */
export const SETTLE_MS = 40_000;

/** Which of the new rules are on (all off: the rules of main today). */
export interface Rules {
  /** G1: the guard asks every node of the deployment (the seed list), not only the nodes the process discovered */
  g1: boolean;
  /** G2: a node that does not answer is tolerated only once this process has seen the key for FENCE_MS */
  g2: boolean;
  /** G3: the key the process knew before the writes were sent equals the key of the view asked after them */
  g3: boolean;
  /** W1: check-start wipes (any mark) only if a majority serves without the node; unstable without one waits */
  w1: boolean;
  /** S1: a spend already recorded for the same spender writes (generation + 1, replicated, commit-all) */
  s1: boolean;
  /**
   * W2: an unstable node is killed only while min-cluster-size of the other nodes may serve without it (not
   * reachable-and-not-running: their hosts refuse the connection); else its count starts again
   */
  w2: boolean;
  /** G2's fence (FENCE_MS unless said) */
  fenceMs?: number;
  /** a node whose host refuses the connection (not running, reachable) is down: tolerated without the fence */
  down?: boolean;
}

export const TODAY: Rules = { g1: false, g2: false, g3: false, w1: false, s1: false, w2: false };
export const NEW_RULES: Rules = { g1: true, g2: true, g3: true, w1: true, s1: true, w2: true };
export const RULE_NAMES = ['g1', 'g2', 'g3', 'w1', 's1', 'w2'] as const;

/** A fault in force from `from` to `to` (ms), or a kill at `at`. Nodes are 0..2 (n1..n3); n1 is the first seed. */
export type Fault =
  | { kind: 'isolate'; node: number; from: number; to: number }
  | { kind: 'isolateAll'; from: number; to: number }
  | { kind: 'fabric'; a: number; b: number; from: number; to: number }
  /** the node and the clients of its AZ cut off together from the rest */
  | { kind: 'az'; node: number; from: number; to: number }
  /** systemd starts it again after `downMs` (RESTART_MS unless said: a nemesis may keep it down longer) */
  | { kind: 'kill'; node: number; at: number; downMs?: number };

export interface ProcessSpec {
  /** the AZ of the process (az faults cut it off with the node of the same index) */
  az: number;
  startAt: number;
  stopAt: number;
  /** the spender (the spending tx) of every spend this process sends */
  spender: string;
  /** output -> when its spend is first sent */
  spends: { output: number; at: number }[];
  /** pause between an answer that is not final and the next attempt */
  retryMs: number;
  /** the process serves other spends too: it asks a view every tend */
  busy: boolean;
}

export interface Scenario {
  nemesis: string;
  rf: 2 | 3;
  /** the record's partition succession list (its master is the first member) */
  succession: number[];
  /** each node's clock minus real time */
  skew: number[];
  /** how long a node takes to join a cluster it hears (at most a quantum) */
  joinMs: number;
  /** how long after the others re-form without it a node left out notices it is an orphan (answers its old key) */
  orphanLagMs: number;
  /** how long asd takes from its start to answering (loading its data; connection refused meanwhile) */
  startupMs: number;
  /** from a write's application to the view asked after its answer (the answer's way back, the view's way there) */
  viewDelayMs: number;
  /** how long the client waits for an answer that does not come (the in-doubt timeout) */
  inDoubtMs: number;
  /** each node's watchdog poll phase (ms) */
  wdPhase: number[];
  faults: Fault[];
  processes: ProcessSpec[];
  /** when the faults are over and the processes stopped */
  endAt: number;
  seed: number;
}
