/**
 * The drill's view of the backup bucket (the emulator's S3, through the AWS SDK): a backup's manifest and size, and
 * the forged backups the restore must refuse, made from a real one: a directory without BACKUP_COMPLETE (asbackup
 * died, or a node wrote files only), one whose marker lists a file it lacks (truncated), one with a file altered
 * at the same size.
 */
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
  type _Object,
} from '@aws-sdk/client-s3';
import { BACKUP_COMPLETE_MARKER } from '../../cdk/backup-scripts';

const PART = 5 * 1024 * 1024;

export interface Manifest {
  records: number;
  files: { sha256: string; size: number; name: string }[];
}

/** The manifest of a BACKUP_COMPLETE marker (cdk/backup-scripts.ts renderBackupScript), or why it is not one. */
export function parseManifest(text: string): Manifest | string {
  const records = /^records=(\d+)$/m.exec(text);
  if (!records) return 'no records= line';
  const files: Manifest['files'] = [];
  for (const line of text.split('\n').filter((l) => l.startsWith('file='))) {
    const m = /^file=([0-9a-f]{64}) (\d+) ([A-Za-z0-9_][A-Za-z0-9._-]*)$/.exec(line);
    if (!m) return `a malformed line: ${line}`;
    files.push({ sha256: m[1], size: Number(m[2]), name: m[3] });
  }
  if (files.length === 0) return 'no file= line';
  return { records: Number(records[1]), files };
}

export class BackupBucket {
  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    readonly prefix: string,
  ) {}

  private key(stamp: string, name: string): string {
    return `${this.prefix}/${stamp}/${name}`;
  }

  async list(stamp: string): Promise<_Object[]> {
    const out: _Object[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${this.prefix}/${stamp}/`, ContinuationToken: token }),
      );
      out.push(...(page.Contents ?? []));
      token = page.NextContinuationToken;
    } while (token);
    return out;
  }

  async read(stamp: string, name: string): Promise<Buffer> {
    const r = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(stamp, name) }));
    return Buffer.from(await r.Body!.transformToByteArray());
  }

  /** a PutObject up to PART bytes, else a multipart upload of PART-byte parts (as asbackup writes: the emulator's
   * request body limit is below a backup file's size) */
  async write(stamp: string, name: string, body: Buffer): Promise<void> {
    const target = { Bucket: this.bucket, Key: this.key(stamp, name) };
    if (body.length <= PART) {
      await this.s3.send(new PutObjectCommand({ ...target, Body: body }));
      return;
    }
    const { UploadId } = await this.s3.send(new CreateMultipartUploadCommand(target));
    const parts: { ETag?: string; PartNumber: number }[] = [];
    for (let at = 0, n = 1; at < body.length; at += PART, n++) {
      const part = await this.s3.send(
        new UploadPartCommand({ ...target, UploadId, PartNumber: n, Body: body.subarray(at, at + PART) }),
      );
      parts.push({ ETag: part.ETag, PartNumber: n });
    }
    await this.s3.send(new CompleteMultipartUploadCommand({ ...target, UploadId, MultipartUpload: { Parts: parts } }));
  }

  /** The backup's manifest and the bytes of its files (the marker not counted). */
  async describe(stamp: string): Promise<{ manifest: Manifest; bytes: number; files: number }> {
    const manifest = parseManifest((await this.read(stamp, BACKUP_COMPLETE_MARKER)).toString());
    if (typeof manifest === 'string')
      throw new Error(`backup ${stamp}: its ${BACKUP_COMPLETE_MARKER} is not a manifest: ${manifest}`);
    const objects = (await this.list(stamp)).filter((o) => !o.Key!.endsWith(`/${BACKUP_COMPLETE_MARKER}`));
    return { manifest, bytes: objects.reduce((n, o) => n + (o.Size ?? 0), 0), files: objects.length };
  }

  /** Copies backup `from` to `to`, leaving out `omit` and changing the files `alter` names (same size, one byte). */
  async copy(from: string, to: string, o: { omit?: string[]; alter?: string[] } = {}): Promise<void> {
    for (const obj of await this.list(from)) {
      const name = obj.Key!.slice(`${this.prefix}/${from}/`.length);
      if (o.omit?.includes(name)) continue;
      const body = await this.read(from, name);
      if (o.alter?.includes(name)) body[body.length - 1] ^= 0xff;
      await this.write(to, name, body);
    }
  }
}

export interface ForgedCase {
  name: string;
  stamp: string;
  /** the refusal the restore must print */
  expected: string;
}

/** Makes the forged copies of complete backup `stamp`; answers each with the refusal the restore must give. */
export async function forgeBackups(bucket: BackupBucket, stamp: string): Promise<ForgedCase[]> {
  const { manifest } = await bucket.describe(stamp);
  const first = manifest.files[0].name;
  const cases: (ForgedCase & { omit?: string[]; alter?: string[] })[] = [
    {
      name: 'no BACKUP_COMPLETE (asbackup died; files only)',
      stamp: `${stamp}-forged-nomarker`,
      omit: [BACKUP_COMPLETE_MARKER],
      expected: `has no ${BACKUP_COMPLETE_MARKER}: an incomplete or missing backup, refused`,
    },
    {
      name: `the marker, ${first} missing (truncated)`,
      stamp: `${stamp}-forged-truncated`,
      omit: [first],
      expected: `lacks files its manifest lists: ${first}, refused`,
    },
    {
      name: `the marker, ${first} altered at the same size`,
      stamp: `${stamp}-forged-altered`,
      alter: [first],
      expected: `holds ${first} whose SHA-256 is not the manifest's, refused`,
    },
  ];
  for (const c of cases) await bucket.copy(stamp, c.stamp, { omit: c.omit, alter: c.alter });
  return cases.map(({ name, stamp: s, expected }) => ({ name, stamp: s, expected }));
}
