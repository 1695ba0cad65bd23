/**
 * BENCH_SCALE_PROFILE=<dir>: the server's CPU profile of each phase of the block's second round (the first without
 * the replay's recorder) and of the replay's first round (node:inspector in this process, which is the local server's
 * and the replay's), written as `<dir>/<phase>.cpuprofile` and `<dir>/replay-<phase>.cpuprofile` (open in Chrome
 * DevTools or speedscope) and summarised on stderr: where the phase's samples went, by self time. The profiler's
 * sampling slows the profiled round (about 5-15 %), so that round rarely is the phase's best; the others are not
 * profiled.
 */
import { mkdirSync, writeFileSync } from 'fs';
import * as path from 'path';
import { Session } from 'inspector';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

export const PROFILE_DIR = process.env.BENCH_SCALE_PROFILE;

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T))),
  );
}

/** Runs `work` under the CPU profiler; the profile is written to PROFILE_DIR/<name>.cpuprofile and summarised. */
export async function profiled<T>(name: string, work: () => Promise<T>, report: (line: string) => void): Promise<T> {
  if (!PROFILE_DIR) return work();
  const session = new Session();
  session.connect();
  try {
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.setSamplingInterval', { interval: 200 });
    await post(session, 'Profiler.start');
    const result = await work();
    const { profile } = await post<{ profile: CpuProfile }>(session, 'Profiler.stop');
    mkdirSync(PROFILE_DIR, { recursive: true });
    writeFileSync(path.join(PROFILE_DIR, `${name}.cpuprofile`), JSON.stringify(profile));
    for (const line of summariseProfile(profile)) report(`profile ${name}: ${line}`);
    return result;
  } finally {
    session.disconnect();
  }
}

/** Where a frame belongs, for the summary's groups. */
export function frameGroup(frame: ProfileNode['callFrame']): string {
  const { functionName: fn, url } = frame;
  if (fn === '(idle)') return 'idle (waiting for Aerospike or the client)';
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(program)') return 'native, outside JS (the native client, libuv, V8)';
  if (url.includes('node_modules/aerospike')) return 'aerospike client (JS side)';
  if (url.includes('node_modules/zod')) return 'zod validation';
  if (url.includes('node_modules/@middy') || url.includes('node_modules/@aws-lambda-powertools'))
    return 'middy and Powertools';
  if (url.includes('node_modules')) return 'other libraries';
  if (url.startsWith('node:') || url === '') return `node built-ins (${fn || 'anonymous'})`;
  const m = /\/(lib|server|functions|bench)\/(.*)$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : url;
}

/** Self time by group and by function, in percent of the phase's samples (the top lines). */
export function summariseProfile(profile: CpuProfile, top = 12): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    const d = deltas[i + 1] ?? 0; // a sample's time is the gap to the next one
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + d);
    total += d;
  }
  if (total === 0) return ['no samples'];
  const groups = new Map<string, number>();
  const fns = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    const g = frameGroup(frame);
    groups.set(g, (groups.get(g) ?? 0) + us);
    // no line numbers: under tsx they are the transpiled file's
    const file = frame.url ? path.basename(frame.url) : '';
    const fn = `${frame.functionName || '(anonymous)'}${file ? ` ${file}` : ''}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1)} %`;
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `${(total / 1000).toFixed(0)} ms sampled`,
    ...sorted(groups).map(([g, us]) => `group ${pct(us)} ${g}`),
    ...sorted(fns).map(([f, us]) => `self ${pct(us)} ${f}`),
  ];
}
