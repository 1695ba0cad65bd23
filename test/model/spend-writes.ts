/**
 * Writes:
 *  - a write goes to the master of the client's partition map; a node that is not master proxies it inside its
 *    cluster; the master applies the UDF and sends replica writes to its map's replicas (commit-all); a replica
 *    write that cannot be delivered (fabric port cut, replica down) leaves the client in doubt; a replica of another
 *    cluster accepts a replica write by last-update-time alone (CE: partition_ce.c:53, rw_utils_ce.c:289,
 *    replica_write.c:309);
 *  - "already spent by this spender" returns without an update (utxo.lua:629), which the server treats as a read:
 *    no replica write (udf.c:756). Rule S1 makes that path write.
 * Modelling choices: a replica write that the replica's last-update-time rejects still counts as delivered (the
 * master answers OK, the guard judges it); a replica write that cannot be delivered is not sent again later.
 */
import { cloneCopy, type Copy, type Map_ } from './record';
import { nodeName } from './model-state';
import { NodeLifecycle } from './node-lifecycle';

export type Answer = 'ok' | 'inDoubt' | 'spent' | 'error';

export class SpendWrites extends NodeLifecycle {
  /** commit-all: a replica write to each replica of the master's map; false when one cannot be delivered. */
  protected replicate(m: number, map: Map_, copy: Copy): boolean {
    let all = true;
    for (const r of this.replicasOf(map)) {
      if (r === m) continue;
      if (!this.fabric[m][r] || !this.running(r)) {
        all = false;
        continue;
      }
      const rn = this.nodes[r];
      // same cluster: applied; another cluster's node accepts a replica write by last-update-time alone (CE)
      if (rn.view?.key === map.key || !rn.copy || copy.lut > rn.copy.lut) {
        if (rn.view?.key !== map.key)
          this.log(`${nodeName(r)} accepts ${nodeName(m)}'s replica write of old map K${map.key}`);
        rn.copy = cloneCopy(copy);
      }
    }
    return all;
  }

  /** The spend UDF at the master (utxo.lua spend): 'ok' | 'inDoubt' | 'spent' | 'error'. */
  protected spendAtMaster(m: number, map: Map_, output: number, spender: string): Answer {
    const n = this.nodes[m];
    if (!n.copy) return 'error';
    const current = n.copy.spenders[output];
    if (current !== null && current !== spender) return 'spent';
    // utxo.lua:629: already spent by this spender returns without an update: no replica write (udf.c:756)
    if (current === spender && !this.rules.s1) return 'ok';
    const next = cloneCopy(n.copy);
    next.gen++;
    next.lut = this.t + this.sc.skew[m];
    next.spenders[output] = spender;
    n.copy = next;
    const delivered = this.replicate(m, map, next);
    this.log(
      `${nodeName(m)} applies ${spender}${output} in ${n.view ? `K${map.key}` : `old map K${map.key} (orphan)`} -> ${this.show(next)}${delivered ? '' : ' replica write undelivered: in doubt'}`,
    );
    return delivered ? 'ok' : 'inDoubt';
  }

  /** A write sent to node `m` (the master of the client's map): applied, proxied inside its cluster, or refused. */
  protected spendAt(m: number, output: number, spender: string): Answer {
    const map = this.servingMap(m);
    if (!map) return 'error';
    const master = this.replicasOf(map)[0];
    if (master === m) return this.spendAtMaster(m, map, output, spender);
    const n = this.nodes[m];
    if (n.view && this.fabric[m][master] && this.nodes[master].view?.key === map.key)
      return this.spendAtMaster(master, map, output, spender);
    return 'inDoubt';
  }
}
