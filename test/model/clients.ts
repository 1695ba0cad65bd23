/**
 * Store processes: discovery, tends, and the spend acknowledgement guard:
 *  - a client learns nodes from the first seed that answers and from its nodes' peer lists; the majority's peer
 *    lists hold only its members (service_list.c:643, as_cluster.c:328-410); its partition map is refreshed every
 *    tend (1 s) from one of the nodes it knows, an orphan's old map included (as_partition.c:343-355).
 * Modelling choices: the view is asked viewDelayMs after the write was applied; a view's answers are taken at one
 * instant.
 * Not modelled: the rollback of refused spends, the client dropping a node it cannot reach.
 */
import { majorityKey, PEER_DOWN } from '../../cdk/node-watchdog';
import { type Map_ } from './record';
import { nodeName, type Worker } from './model-state';
import { FENCE_MS, MIN_CLUSTER_SIZE, NODES, TEND_MS } from './scenario';
import { SpendWrites, type Answer } from './spend-writes';

export class Clients extends SpendWrites {
  protected startProcess(p: number): void {
    const spec = this.sc.processes[p];
    const st = this.procs[p];
    st.started = true;
    // the first seed that answers (the deployment's seed order: n1, n2, n3) gives its peers
    for (let s = 0; s < NODES; s++) {
      if (!this.clientReach[spec.az][s] || !this.running(s)) continue;
      st.known.add(s);
      const n = this.nodes[s];
      for (const peer of (n.view ?? n.orphan?.map)?.members ?? []) st.known.add(peer);
      st.map = this.servingMap(s);
      break;
    }
    this.log(`process ${p} (${spec.spender}, az ${spec.az}) starts knowing {${[...st.known].map(nodeName).join(',')}}`);
  }

  /** A tend: peers learnt from the known nodes, and the map of one of them (the map swings between them). */
  protected tend(p: number): void {
    const spec = this.sc.processes[p];
    const st = this.procs[p];
    const serving: Map_[] = [];
    for (const i of [...st.known]) {
      if (!this.clientReach[spec.az][i] || !this.running(i)) continue;
      const n = this.nodes[i];
      for (const peer of (n.view ?? n.orphan?.map)?.members ?? []) st.known.add(peer);
      const map = this.servingMap(i);
      if (map) serving.push(map);
    }
    if (serving.length > 0) st.map = serving[Math.floor(this.rand() * serving.length)];
    st.tends++;
    if (spec.busy) this.view(p);
  }

  /** A view: each asked node's `cluster-stable` (undefined: no answer); updates the process's last key and first sightings. */
  protected view(p: number): (string | undefined)[] {
    const spec = this.sc.processes[p];
    const st = this.procs[p];
    const asked = this.rules.g1 ? [0, 1, 2] : [...st.known].sort();
    // a node the process reaches whose server is not running refuses the connection: down (decision 0009)
    const answers = asked.map((i) =>
      !this.clientReach[spec.az][i]
        ? undefined
        : this.rules.down && !this.running(i)
          ? PEER_DOWN
          : this.clusterStable(i),
    );
    const key = majorityKey(answers, MIN_CLUSTER_SIZE);
    if (key !== undefined) {
      const k = Number(key.slice(1));
      st.lastKey = k;
      if (!st.firstSeen.has(k)) st.firstSeen.set(k, this.t);
    }
    return answers;
  }

  /**
   * The guard (lib/store/ack-guard.ts judgeView today): no ERROR, every answering node names the same key, at least
   * the majority answered, silent nodes tolerated; G2 tolerates them only after FENCE_MS of the key; G3 wants the
   * key known before the writes.
   */
  protected judge(p: number, answers: (string | undefined)[], keyBefore: number | undefined): boolean {
    if (answers.includes('ERROR')) return false;
    const keys = new Set(answers.filter((a): a is string => a !== undefined && a !== PEER_DOWN));
    if (keys.size !== 1) return false;
    const members = answers.filter((a) => a !== undefined && a !== PEER_DOWN).length;
    if (members < MIN_CLUSTER_SIZE) return false;
    const key = Number([...keys][0].slice(1));
    // only a node that gives no answer at all needs the fence; a down one serves nobody
    if (this.rules.g2 && answers.includes(undefined)) {
      const seen = this.procs[p].firstSeen.get(key);
      if (seen === undefined || this.t - seen < (this.rules.fenceMs ?? FENCE_MS)) return false;
    }
    if (this.rules.g3 && keyBefore !== key) return false;
    return true;
  }

  protected attempt(w: Worker): void {
    const spec = this.sc.processes[w.process];
    const st = this.procs[w.process];
    if (this.rules.g3 && st.lastKey === undefined) this.view(w.process);
    const keyBefore = st.lastKey;
    const master = st.map ? this.replicasOf(st.map)[0] : undefined;
    let answer: Answer = 'inDoubt';
    if (master !== undefined && this.clientReach[spec.az][master] && this.running(master))
      answer = this.spendAt(master, w.output, w.spender);
    if (answer === 'spent') {
      w.done = true;
      return;
    }
    if (answer === 'inDoubt') {
      w.nextAt = this.t + this.sc.inDoubtMs + spec.retryMs;
      return;
    }
    if (answer === 'ok') {
      w.viewAt = this.t + this.sc.viewDelayMs;
      w.keyBefore = keyBefore;
      if (this.sc.viewDelayMs === 0) this.acknowledge(w);
      return;
    }
    w.nextAt = this.t + spec.retryMs;
  }

  /** The view asked once the write was answered OK, and the guard's verdict on it. */
  protected acknowledge(w: Worker): void {
    const answers = this.view(w.process);
    const ok = this.judge(w.process, answers, w.keyBefore);
    w.viewAt = undefined;
    if (!ok) {
      w.nextAt = this.t + this.sc.processes[w.process].retryMs;
      return;
    }
    w.done = true;
    this.acks.push({
      output: w.output,
      spender: w.spender,
      at: this.t,
      process: w.process,
      waitedMs: this.t - w.firstAt,
    });
    this.log(`ACK ${w.spender}${w.output} to process ${w.process} (view ${answers.map((a) => a ?? '-').join(' ')})`);
  }

  protected clients(): void {
    this.sc.processes.forEach((spec, p) => {
      const st = this.procs[p];
      if (!st.started && this.t >= spec.startAt) this.startProcess(p);
      if (st.started && this.t < spec.stopAt && (this.t - spec.startAt) % TEND_MS === 0 && this.t > spec.startAt)
        this.tend(p);
    });
    for (const w of this.workers) {
      const spec = this.sc.processes[w.process];
      if (w.done || !this.procs[w.process].started) continue;
      if (w.viewAt !== undefined) {
        if (this.t >= w.viewAt) this.acknowledge(w);
        continue;
      }
      if (this.t < w.nextAt || this.t >= spec.stopAt) continue;
      this.attempt(w);
    }
  }
}
