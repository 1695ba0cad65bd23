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
 * The backup, run on every node by the schedule; only the cluster principal backs up (one backup per run, from
 * whichever node currently leads), writing `s3://<bucket>/<prefix>/<UTC time>/` with asbackup's S3 support
 * (aerospike.com/docs/database/tools/backup-and-restore/asbackup/s3) and, after asbackup succeeded, the
 * BACKUP_COMPLETE marker with the record count. A run that fails leaves no marker, and restore refuses it.
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
asbackup --namespace ${shq(o.namespace)} --directory "$DEST" --s3-region "$REGION" --compress zstd
printf 'namespace=%s\\nnode=%s\\nfinished=%s\\n' ${shq(o.namespace)} "$NODE" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" |
  aws s3 cp --region "$REGION" - "$DEST/${BACKUP_COMPLETE_MARKER}"
aws cloudwatch put-metric-data --region "$REGION" --namespace ${shq(o.metric.namespace)} --metric-name BackupCompleted \
  --dimensions ${shq(`cluster_name=${o.metric.clusterName}`)} --value 1 ||
  echo "aerospike-backup: BackupCompleted not put: the backup-age alarm will fire" >&2
echo "aerospike-backup: $DEST complete"
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
 * the namespace with asrestore. It refuses a backup without the BACKUP_COMPLETE marker. Existing records are kept
 * unless the backup's are newer (asrestore's default generation policy), so a restore into a cluster that kept part
 * of its data does not roll newer records back.
 */
export function renderRestoreScript(o: { bucket: string; prefix: string; namespace: string }): string {
  return `#!/bin/bash
# aerospike-restore <backup time>: asrestore of s3://${o.bucket}/${o.prefix}/<backup time>/ into namespace ${o.namespace}
set -euo pipefail
${IMDS_REGION}
STAMP=\${1:?usage: aerospike-restore <backup time, e.g. 2026-01-31T03-00-00Z>}
case "$STAMP" in *[!A-Za-z0-9:-]*) echo "aerospike-restore: bad backup time \\"$STAMP\\"" >&2; exit 2 ;; esac
SRC="s3://${o.bucket}/${o.prefix}/$STAMP"
MARKER=$(mktemp); trap 'rm -f "$MARKER"' EXIT
if ! aws s3 cp --region "$REGION" "$SRC/${BACKUP_COMPLETE_MARKER}" - >"$MARKER"; then
  echo "aerospike-restore: $SRC has no ${BACKUP_COMPLETE_MARKER}: an incomplete or missing backup, refused" >&2
  exit 1
fi
cat "$MARKER"
asrestore --namespace ${shq(o.namespace)} --directory "$SRC" --s3-region "$REGION"
echo "aerospike-restore: $SRC restored into ${o.namespace}"
`;
}
