/**
 * Clustering (clustering.c, exchange.c):
 *  - a cluster re-forms when a member has not heard another for the heartbeat timeout (150 ms x 20 = 3 s); the
 *    members that still hear each other form it with a fresh key (keys never repeat); with fewer than
 *    min-cluster-size they are orphans (clustering.c);
 *  - an orphan answers `cluster-stable` ERROR at once (thr_info.c:1240) but keeps serving its old partition map for
 *    5 clustering quanta, then blocks client commands (exchange.c:2289, as_partition_balance_revert_to_orphan);
 *  - a node joins a cluster it hears after about one clustering quantum; the copies of the nodes of the new cluster
 *    are merged (record.ts).
 * Modelling choices: a node left out of a re-formed cluster may notice it is an orphan later than the majority
 * re-forms (orphanLagMs; it answers its old key meanwhile), but nodes it hears (restarted ones: two-kill) take it into
 * the cluster they form, as a principal takes every node adjacent to it; the merge of a new cluster is immediate.
 */
import { cloneCopy, mergeCopies, type Map_ } from './record';
import { ModelState, nodeName } from './model-state';
import { MIN_CLUSTER_SIZE, NODES, ORPHAN_SERVE_MS } from './scenario';

export class Clustering extends ModelState {
  /** The largest set of `nodes` whose pairs all satisfy `ok` (the highest node ids preferred: the principal). */
  protected largestClique(nodes: number[], ok: (a: number, b: number) => boolean): number[] {
    let best: number[] = [];
    const n = nodes.length;
    for (let mask = 1; mask < 1 << n; mask++) {
      const set = nodes.filter((_, k) => mask & (1 << k));
      if (set.length < best.length) continue;
      if (!set.every((a) => set.every((b) => a === b || ok(a, b)))) continue;
      if (set.length > best.length || Math.max(...set) > Math.max(...best)) best = set;
    }
    return best;
  }

  protected formCluster(members: number[]): void {
    const map: Map_ = { key: ++this.keys, members: [...members].sort() };
    const merged = mergeCopies(members.map((i) => this.nodes[i].copy));
    const replicas = this.replicasOf(map);
    for (const i of members) {
      const n = this.nodes[i];
      n.view = map;
      n.orphan = null;
      n.leaveAt = null;
      n.copy = merged && replicas.includes(i) ? cloneCopy(merged) : null;
    }
    this.log(
      `cluster K${map.key} = {${map.members.map(nodeName).join(',')}} merged ${merged ? this.show(merged) : 'no copy'}`,
    );
  }

  protected becomeOrphan(i: number, map: Map_): void {
    this.nodes[i].view = null;
    this.nodes[i].orphan = { map, since: this.t };
    this.log(`${nodeName(i)} orphan (old map K${map.key}): cluster-stable ERROR, serves its old map for 5 quanta`);
  }

  protected clustering(): void {
    const holders = new Map<number, number[]>();
    for (let i = 0; i < NODES; i++) {
      const n = this.nodes[i];
      if (n.leaveAt !== null && this.t >= n.leaveAt && n.view) {
        n.leaveAt = null;
        this.becomeOrphan(i, n.view);
      }
      if (this.running(i) && n.view && n.leaveAt === null)
        holders.set(n.view.key, [...(holders.get(n.view.key) ?? []), i]);
    }
    // a cluster breaks when a member has not heard another for the heartbeat timeout, or one came back restarted
    for (const [key, hs] of holders) {
      const map = this.nodes[hs[0]].view as Map_;
      const broken = map.members.some((j) =>
        hs.some((i) => i !== j && (!this.alive(i, j) || (this.running(j) && this.nodes[j].view?.key !== key))),
      );
      if (!broken) continue;
      holders.delete(key);
      const stay = this.largestClique(hs, (a, b) => this.alive(a, b));
      const reform = stay.length >= MIN_CLUSTER_SIZE;
      for (const i of hs) {
        if (reform && stay.includes(i)) continue;
        if (this.sc.orphanLagMs > 0) this.nodes[i].leaveAt = this.t + this.sc.orphanLagMs;
        else this.becomeOrphan(i, map);
      }
      if (reform) {
        this.formCluster(stay);
        holders.set(this.nodes[stay[0]].view!.key, stay);
      }
    }
    // nodes outside any cluster join the one they hear (every member, for joinMs), or form one together
    const heardFor = (a: number, b: number) => {
      const since = this.pairUpSince[a][b];
      return since !== null && this.t - since >= this.sc.joinMs;
    };
    // a node left out that has not noticed yet (leaveAt) is free too: the nodes it hears take it into their cluster
    const free = [0, 1, 2].filter((i) => this.running(i) && (!this.nodes[i].view || this.nodes[i].leaveAt !== null));
    if (free.length === 0) return;
    const clusters = [...holders.values()].sort((a, b) => b.length - a.length);
    if (clusters.length > 0) {
      const members = clusters[0];
      const joiners = free.filter((i) => members.every((j) => heardFor(i, j)));
      if (joiners.length > 0) this.formCluster([...members, ...joiners]);
      return;
    }
    const together = this.largestClique(free, heardFor);
    if (together.length >= MIN_CLUSTER_SIZE) this.formCluster(together);
  }

  /** The map a node serves writes with: its cluster's, or an orphan's old one for 5 quanta (then it blocks). */
  protected servingMap(i: number): Map_ | null {
    const n = this.nodes[i];
    if (!this.running(i)) return null;
    if (n.view) return n.view;
    if (n.orphan && this.t - n.orphan.since < ORPHAN_SERVE_MS) return n.orphan.map;
    return null;
  }

  /** `cluster-stable:ignore-migrations=true`: the key, ERROR (orphan, or outside any cluster), no answer (not running). */
  protected clusterStable(i: number): string | undefined {
    if (!this.running(i)) return undefined;
    const v = this.nodes[i].view;
    return v ? `K${v.key}` : 'ERROR';
  }
}
