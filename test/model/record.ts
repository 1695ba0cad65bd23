/**
 * The record's copies and the merge rule: the copies of the nodes of a new cluster are merged: higher generation
 * wins, then the later last-update-time (record.c:446); the merged copy lands on the new cluster's replicas
 * (migrations, duplicate resolution: partition_balance.c).
 */

export interface Copy {
  gen: number;
  lut: number;
  spenders: (string | null)[];
}

/** A partition map: the cluster key and its members. */
export interface Map_ {
  key: number;
  members: number[];
}

export const cloneCopy = (c: Copy): Copy => ({ gen: c.gen, lut: c.lut, spenders: [...c.spenders] });

/** record.c:446 (conflict-resolution-policy generation): higher generation, then the later last-update-time. */
export function mergeCopies(copies: (Copy | null)[]): Copy | null {
  let best: Copy | null = null;
  for (const c of copies) {
    if (!c) continue;
    if (!best || c.gen > best.gen || (c.gen === best.gen && c.lut > best.lut)) best = c;
  }
  return best ? cloneCopy(best) : null;
}
