import { frameGroup, summariseProfile, type CpuProfile } from '../../bench/sections/scale/phase-profile';

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });

describe('the block bench phase profile summary', () => {
  it('groups self time by where the frame belongs', () => {
    expect(frameGroup(frame('(idle)'))).toMatch(/^idle/);
    expect(frameGroup(frame('(garbage collector)'))).toBe('garbage collection');
    expect(frameGroup(frame('asExec', 'file:///x/node_modules/aerospike/lib/client.js'))).toBe(
      'aerospike client (JS side)',
    );
    expect(frameGroup(frame('parseTx', 'file:///repo/lib/domain/tx.ts'))).toBe('lib/domain/tx.ts');
  });

  it('counts each sample as the gap to the next one, in percent of the phase', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)') },
        { id: 2, callFrame: frame('(garbage collector)') },
        { id: 3, callFrame: frame('parseTx', 'file:///repo/lib/domain/tx.ts') },
      ],
      samples: [2, 3, 3, 3],
      timeDeltas: [0, 100, 100, 200],
    };
    const lines = summariseProfile(profile);
    expect(lines[0]).toBe('0 ms sampled');
    expect(lines).toContain('group 75.0 % lib/domain/tx.ts');
    expect(lines).toContain('group 25.0 % garbage collection');
    expect(lines).toContain('self 75.0 % parseTx tx.ts');
  });

  it('says so when there are no samples', () => {
    expect(summariseProfile({ nodes: [] })).toEqual(['no samples']);
  });
});
