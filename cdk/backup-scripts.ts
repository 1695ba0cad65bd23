/**
 * The backup and restore scripts a node runs (cdk/backup.ts schedules and documents them), rendered at synth. Pure
 * functions of the settings like the rest of a node's scripts (cdk/aerospike-scripts.ts), so that
 * test/cdk/node-scripts.test.ts runs them with bash against stub commands.
 */

import { IMDS_REGION, shq } from './aerospike-scripts';

/** the tag the backup puts on superseded backups' objects: the only ones the lifecycle expires (cdk/backup.ts) */
export const SUPERSEDED_TAG = 'bsv-utxo-store-superseded';
/** the file a backup writes last: a restore accepts only a backup directory that has it */
export const BACKUP_COMPLETE_MARKER = 'BACKUP_COMPLETE';

/**
 * how asbackup compresses the backup files, and so how asrestore must read them (`--compress` on both sides: asrestore
 * reads zstd files only when told, and refuses them otherwise with "Invalid version line")
 */
export const BACKUP_COMPRESSION = 'zstd';

/** what a backup file's name may be: asbackup's `<namespace>_<n>.asb`; nothing a path or an option could hide in */
export const BACKUP_FILE_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9._-]*$';

/**
 * The backup, run on every node by the schedule; only the cluster principal backs up (one backup per run, from
 * whichever node currently leads), writing `s3://<bucket>/<prefix>/<UTC time>/` with asbackup's S3 support
 * (aerospike.com/docs/database/tools/backup-and-restore/asbackup/s3). After asbackup succeeded it writes, last, the
 * BACKUP_COMPLETE marker holding the manifest: `records=` the count asbackup reported (its `--machine` SUMMARY
 * line), one `file=<sha256> <size> <name>` line per object of the directory, with the size S3 lists and the SHA-256
 * of what S3 serves back (what the bucket holds, not what asbackup meant to write). A run that fails leaves no
 * marker, and restore refuses it; restore also refuses a directory that differs from its manifest.
 */
export function renderBackupScript(o: {
  bucket: string;
  prefix: string;
  namespace: string;
  /** the BackupCompleted metric put after the marker (the backup-age alarm, cdk/backup.ts) */
  metric: { namespace: string; clusterName: string };
  /** complete backups never superseded: only older ones are tagged for the lifecycle's expiry */
  keepNewest: number;
}): string {
  return `#!/bin/bash
# aerospike-backup: asbackup of namespace ${o.namespace} to s3://${o.bucket}/${o.prefix}/<time>/ (cluster principal only)
set -euo pipefail
${IMDS_REGION}
NODE=$(asinfo -v node)
PRINCIPAL=$(asinfo -v statistics | tr ';' '\\n' | sed -n 's/^cluster_principal=//p')
if [ "$NODE" != "$PRINCIPAL" ]; then echo "aerospike-backup: node $NODE is not the principal ($PRINCIPAL): skipped"; exit 0; fi
STAMP=\${STAMP:-$(date -u +%Y-%m-%dT%H-%M-%SZ)}
DEST="s3://${o.bucket}/${o.prefix}/$STAMP"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
asbackup --namespace ${shq(o.namespace)} --directory "$DEST" --s3-region "$REGION" --compress ${BACKUP_COMPRESSION} --machine "$WORK/machine"
RECORDS=$(sed -n 's/^SUMMARY:\\([0-9][0-9]*\\):.*/\\1/p' "$WORK/machine" | tail -n 1)
if [ -z "$RECORDS" ]; then echo "aerospike-backup: asbackup wrote no SUMMARY: no ${BACKUP_COMPLETE_MARKER}" >&2; exit 1; fi
# the manifest: every object of the directory, its size as S3 lists it, the SHA-256 of what S3 serves
aws s3api list-objects-v2 --region "$REGION" --bucket ${shq(o.bucket)} --prefix "${o.prefix}/$STAMP/" \\
  --query 'Contents[].[Key,Size]' --output text >"$WORK/objects"
FILES=0
printf 'namespace=%s\\nnode=%s\\nrecords=%s\\n' ${shq(o.namespace)} "$NODE" "$RECORDS" >"$WORK/manifest"
while IFS=$'\\t' read -r KEY SIZE; do
  [ "$KEY" = None ] && continue
  NAME=\${KEY#"${o.prefix}/$STAMP/"}
  if ! [[ "$NAME" =~ ${BACKUP_FILE_PATTERN} ]] || [ "$NAME" = ${BACKUP_COMPLETE_MARKER} ]; then
    echo "aerospike-backup: unexpected object $KEY: no ${BACKUP_COMPLETE_MARKER}" >&2; exit 1
  fi
  SUM=$(aws s3 cp --region "$REGION" "$DEST/$NAME" - </dev/null | sha256sum | cut -d ' ' -f 1)
  printf 'file=%s %s %s\\n' "$SUM" "$SIZE" "$NAME" >>"$WORK/manifest"
  FILES=$((FILES + 1))
done <"$WORK/objects"
if [ "$FILES" -eq 0 ]; then echo "aerospike-backup: asbackup wrote no file: no ${BACKUP_COMPLETE_MARKER}" >&2; exit 1; fi
printf 'finished=%s\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$WORK/manifest"
aws s3 cp --region "$REGION" - "$DEST/${BACKUP_COMPLETE_MARKER}" <"$WORK/manifest"
aws cloudwatch put-metric-data --region "$REGION" --namespace ${shq(o.metric.namespace)} --metric-name BackupCompleted \\
  --dimensions ${shq(`cluster_name=${o.metric.clusterName}`)} --value 1 ||
  echo "aerospike-backup: BackupCompleted not put: the backup-age alarm will fire" >&2
echo "aerospike-backup: $DEST complete: $RECORDS records in $FILES files"
# Supersede: every backup directory older than the newest ${o.keepNewest} complete ones gets the tag the lifecycle's
# expiry needs (${SUPERSEDED_TAG}=true); if backups stop, nothing more is tagged and the newest complete ones stay.
CUTOFF=$(aws s3 ls --region "$REGION" --recursive "s3://${o.bucket}/${o.prefix}/" | awk '{print $4}' |
  sed -n 's#^${o.prefix}/\\([^/]*\\)/${BACKUP_COMPLETE_MARKER}$#\\1#p' | sort | tail -n ${o.keepNewest} | head -n 1)
for DIR in $(aws s3 ls --region "$REGION" "s3://${o.bucket}/${o.prefix}/" | awk '$1 == "PRE" {print $2}' | tr -d / | sort); do
  [[ "$DIR" < "$CUTOFF" ]] || continue
  for KEY in $(aws s3api list-objects-v2 --region "$REGION" --bucket ${shq(o.bucket)} --prefix "${o.prefix}/$DIR/" \
      --query 'Contents[].Key' --output text); do
    [ "$KEY" = None ] && continue
    aws s3api put-object-tagging --region "$REGION" --bucket ${shq(o.bucket)} --key "$KEY" \
      --tagging 'TagSet=[{Key=${SUPERSEDED_TAG},Value=true}]'
  done
  echo "aerospike-backup: ${o.prefix}/$DIR superseded (expires after the retention)"
done
`;
}

/**
 * The restore (runbook "Restore from backup"): `aerospike-restore <backup time>` restores one complete backup into
 * the namespace with asrestore. Before asrestore runs it refuses a backup without the BACKUP_COMPLETE marker, a
 * marker without a manifest, and a directory that is not the manifest's: a file missing, one more, a size or a
 * SHA-256 that differs (every file is read once from S3 and hashed). The manifest is the backing-up node's word: it
 * shows a backup truncated, corrupted or mixed with another, not one that node forged whole (docs/security.md T8).
 * Existing records are kept unless the backup's are newer (asrestore's default generation policy), so a restore
 * into a cluster that kept part of its data does not roll newer records back.
 */
export function renderRestoreScript(o: { bucket: string; prefix: string; namespace: string }): string {
  return `#!/bin/bash
# aerospike-restore <backup time>: asrestore of s3://${o.bucket}/${o.prefix}/<backup time>/ into namespace ${o.namespace}
set -euo pipefail
${IMDS_REGION}
STAMP=\${1:?usage: aerospike-restore <backup time, e.g. 2026-01-31T03-00-00Z>}
case "$STAMP" in *[!A-Za-z0-9:-]*) echo "aerospike-restore: bad backup time \\"$STAMP\\"" >&2; exit 2 ;; esac
SRC="s3://${o.bucket}/${o.prefix}/$STAMP"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
refuse() { echo "aerospike-restore: $SRC $*, refused" >&2; exit 1; }
if ! aws s3 cp --region "$REGION" "$SRC/${BACKUP_COMPLETE_MARKER}" - >"$WORK/marker"; then
  refuse "has no ${BACKUP_COMPLETE_MARKER}: an incomplete or missing backup"
fi
cat "$WORK/marker"
RECORDS=$(sed -n 's/^records=\\([0-9][0-9]*\\)$/\\1/p' "$WORK/marker")
sed -n 's/^file=//p' "$WORK/marker" >"$WORK/manifest"
if [ -z "$RECORDS" ] || [ ! -s "$WORK/manifest" ]; then refuse "has a ${BACKUP_COMPLETE_MARKER} without a manifest"; fi
if grep -Evq '^[0-9a-f]{64} [0-9]+ ${BACKUP_FILE_PATTERN.slice(1)}' "$WORK/manifest"; then
  refuse "has a malformed manifest line"
fi
# name and size: as the manifest says, as S3 lists them (every object but the marker)
awk '{print $3 " " $2}' "$WORK/manifest" | LC_ALL=C sort >"$WORK/expected"
aws s3api list-objects-v2 --region "$REGION" --bucket ${shq(o.bucket)} --prefix "${o.prefix}/$STAMP/" \\
  --query 'Contents[].[Key,Size]' --output text >"$WORK/objects"
while IFS=$'\\t' read -r KEY SIZE; do
  NAME=\${KEY#"${o.prefix}/$STAMP/"}
  if [ "$KEY" != None ] && [ "$NAME" != ${BACKUP_COMPLETE_MARKER} ]; then printf '%s %s\\n' "$NAME" "$SIZE"; fi
done <"$WORK/objects" | LC_ALL=C sort >"$WORK/listed"
names() { cut -d ' ' -f 1 "$1" | LC_ALL=C sort; }
DUPLICATE=$(names "$WORK/expected" | uniq -d | paste -sd ' ' -)
MISSING=$(LC_ALL=C comm -23 <(names "$WORK/expected") <(names "$WORK/listed") | paste -sd ' ' -)
EXTRA=$(LC_ALL=C comm -13 <(names "$WORK/expected") <(names "$WORK/listed") | paste -sd ' ' -)
RESIZED=$(LC_ALL=C comm -3 "$WORK/expected" "$WORK/listed" | awk '{print $1}' | LC_ALL=C sort -u | paste -sd ' ' -)
if [ -n "$DUPLICATE" ]; then refuse "has a manifest naming a file twice: $DUPLICATE"; fi
if [ -n "$MISSING" ]; then refuse "lacks files its manifest lists: $MISSING"; fi
if [ -n "$EXTRA" ]; then refuse "holds files its manifest does not list: $EXTRA"; fi
if [ -n "$RESIZED" ]; then refuse "holds files whose size is not the manifest's: $RESIZED"; fi
while read -r SUM SIZE NAME; do
  GOT=$(aws s3 cp --region "$REGION" "$SRC/$NAME" - </dev/null | sha256sum | cut -d ' ' -f 1)
  if [ "$GOT" != "$SUM" ]; then refuse "holds $NAME whose SHA-256 is not the manifest's"; fi
done <"$WORK/manifest"
echo "aerospike-restore: $SRC matches its manifest: $(wc -l <"$WORK/manifest") files, $RECORDS records"
asrestore --namespace ${shq(o.namespace)} --directory "$SRC" --s3-region "$REGION" --compress ${BACKUP_COMPRESSION}
echo "aerospike-restore: $SRC restored into ${o.namespace}"
`;
}
