/**
 * Just enough ELF64 (little-endian, x86_64) reading to check the native client that bundling ships: the libraries it
 * needs (DT_NEEDED), its section names (no .debug_* left after stripping) and a digest of what the dynamic loader
 * maps (the SHF_ALLOC sections), which stripping debug info must leave byte for byte.
 */
import { createHash } from 'node:crypto';

export interface ElfSection {
  name: string;
  type: number;
  flags: bigint;
  offset: number;
  size: number;
  link: number;
}

const SHT_NOBITS = 8;
const SHT_DYNAMIC = 6;
const SHF_ALLOC = 2n;
const DT_NEEDED = 1n;

export function elfSections(elf: Buffer): ElfSection[] {
  if (elf.subarray(0, 4).toString('latin1') !== '\x7fELF' || elf[4] !== 2 || elf[5] !== 1)
    throw new Error('not an ELF64 little-endian file');
  const shoff = Number(elf.readBigUInt64LE(0x28));
  const shentsize = elf.readUInt16LE(0x3a);
  const shnum = elf.readUInt16LE(0x3c);
  const shstrndx = elf.readUInt16LE(0x3e);
  const raw = Array.from({ length: shnum }, (_, i) => {
    const at = shoff + i * shentsize;
    return {
      nameAt: elf.readUInt32LE(at),
      type: elf.readUInt32LE(at + 4),
      flags: elf.readBigUInt64LE(at + 8),
      offset: Number(elf.readBigUInt64LE(at + 0x18)),
      size: Number(elf.readBigUInt64LE(at + 0x20)),
      link: elf.readUInt32LE(at + 0x28),
    };
  });
  const names = raw[shstrndx];
  return raw.map(({ nameAt, ...s }) => {
    const start = names.offset + nameAt;
    return { name: elf.toString('latin1', start, elf.indexOf(0, start)), ...s };
  });
}

/** DT_NEEDED entries: the shared libraries the dynamic loader must find for this object. */
export function neededLibraries(elf: Buffer): string[] {
  const sections = elfSections(elf);
  const needed: string[] = [];
  for (const s of sections) {
    if (s.type !== SHT_DYNAMIC) continue;
    const strtab = sections[s.link];
    for (let at = s.offset; at < s.offset + s.size; at += 16) {
      const tag = elf.readBigInt64LE(at);
      if (tag === 0n) break;
      if (tag !== DT_NEEDED) continue;
      const start = strtab.offset + Number(elf.readBigUInt64LE(at + 8));
      needed.push(elf.toString('latin1', start, elf.indexOf(0, start)));
    }
  }
  return needed;
}

/** sha256 over the name and bytes of every section the loader maps (code, data, dynamic symbols, relocations). */
export function loadedSectionsDigest(elf: Buffer): string {
  const hash = createHash('sha256');
  for (const s of elfSections(elf)) {
    if ((s.flags & SHF_ALLOC) === 0n) continue;
    hash.update(`${s.name}\0${s.size}\0`);
    if (s.type !== SHT_NOBITS) hash.update(elf.subarray(s.offset, s.offset + s.size));
  }
  return hash.digest('hex');
}

export function debugSections(elf: Buffer): string[] {
  return elfSections(elf)
    .map((s) => s.name)
    .filter((n) => n.startsWith('.debug_') || n.startsWith('.zdebug_'));
}
