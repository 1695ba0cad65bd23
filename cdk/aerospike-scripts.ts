/**
 * What runs on an Aerospike node, rendered at synth: aerospike.conf, the first-boot script, the device check that
 * guards every start, the rolling config apply (the backup and the restore: cdk/backup-scripts.ts). Pure functions
 * of the settings (no CDK types) so that test/cdk/node-scripts.test.ts runs them with bash against stub commands.
 *
 * Everything a deployment may change (the conf, package URLs and checksums, the scripts themselves) lives in SSM
 * parameters under `<prefix>/`, not in the instances' user data: a changed user data stops and starts an instance
 * (CloudFormation, AWS::EC2::Instance UserData: "Update requires: Some interruptions"), and a stop erases the
 * instance store (EC2 User Guide, "Instance store volume data persistence"), i.e. the node's data. The user data
 * only fetches and runs the bootstrap, and never changes for a node.
 */

import { pinFunctions, type Pins } from './node-pins';
import { watchdogUnitsScript } from './node-watchdog';

export const AEROSPIKE_SERVICE_PORT = 3000;
export const AEROSPIKE_FABRIC_PORT = 3001;
export const AEROSPIKE_HEARTBEAT_PORT = 3002;
/** the Aerospike Prometheus exporter's default listen port (aerospike.com/docs/database/observe/monitor) */
export const EXPORTER_PORT = 9145;
/** replaced at start by one `device /dev/disk/by-id/...` line per instance-store device */
export const DEVICES_PLACEHOLDER = '        @DEVICES@';
/**
 * Commands the server queues per record before it answers KEY_BUSY (namespace `transaction-pending-limit`, server
 * default 20). A block's fan-out tx (one parent, thousands of outputs, children spent by concurrent batches) puts one
 * UDF per in-flight batch on the parent: the queue takes a block's worth of them, and the engine retries what is
 * refused with backoff and jitter (lib/engine/aerospike/retry.ts). docs/settings.md.
 */
export const TRANSACTION_PENDING_LIMIT = 256;

/** the CloudWatch agent's config as fetched (and checked) by the bootstrap */
export const AGENT_CONFIG_FILE = '/usr/local/etc/aerospike-cloudwatch-agent.json';
/** the device list recorded at first boot; every later start must find exactly it */
export const DEVICES_FILE = '/etc/aerospike/devices.list';
export const AEROSPIKE_LOG = '/var/log/aerospike/aerospike.log';

export interface ConfSettings {
  clusterName: string;
  seeds: string[];
  namespace: string;
  replicationFactor: number;
  minClusterSize: number;
  protoFdMax: number;
  nsupPeriodSeconds: number;
  maxRecordSize: number;
  /** Enterprise Edition: the namespace in strong-consistency mode (roster set by the bootstrap) */
  strongConsistency?: boolean;
}

/** Where the bootstrap writes the Enterprise feature key (from the SSM SecureString `<prefix>/feature-key`). */
export const FEATURE_KEY_FILE = '/etc/aerospike/features.conf';

/** aerospike.conf for a cluster whose nodes are `seeds` (DNS names). */
export function renderAerospikeConf(o: ConfSettings): string {
  return [
    '# Written by the bsv-utxo-store CDK app (cdk/aerospike-scripts.ts); applied per node by aerospike-apply-config.',
    'service {',
    `    proto-fd-max ${o.protoFdMax}`,
    `    cluster-name ${o.clusterName}`,
    '    # a majority: a minority cut off by a network partition cannot form a cluster of its own (docs/reliability.md)',
    `    min-cluster-size ${o.minClusterSize}`,
    ...(o.strongConsistency ? [`    feature-key-file ${FEATURE_KEY_FILE}`] : []),
    '}',
    'logging {',
    `    file ${AEROSPIKE_LOG} {`,
    '        context any info',
    '    }',
    '}',
    'network {',
    '    service {',
    '        address any',
    `        port ${AEROSPIKE_SERVICE_PORT}`,
    '    }',
    '    heartbeat {',
    '        mode mesh',
    `        port ${AEROSPIKE_HEARTBEAT_PORT}`,
    ...o.seeds.map((s) => `        mesh-seed-address-port ${s} ${AEROSPIKE_HEARTBEAT_PORT}`),
    '        # cloud networks: interval 150 ms, timeout 20 intervals (Aerospike recommendation): a node is declared gone',
    '        # after 3 s; a node cut off from the others blocks client commands about 16 s later (docs/decisions/0006)',
    '        interval 150',
    '        timeout 20',
    '    }',
    '    fabric {',
    `        port ${AEROSPIKE_FABRIC_PORT}`,
    '    }',
    '}',
    `namespace ${o.namespace} {`,
    `    replication-factor ${o.replicationFactor}`,
    ...(o.strongConsistency
      ? [
          '    # Enterprise: no write is acknowledged unless the roster majority holds it (docs/decisions/0006)',
          '    strong-consistency true',
        ]
      : [
          '    # Community Edition (AP): after a split heals the version with more writes wins (docs/decisions/0006);',
          '    # spends are not acknowledged while the cluster is not settled (SPEND_ACK_GUARD)',
          '    conflict-resolution-policy generation',
        ]),
    '    # records never expire by TTL: deletion is the cleanup service',
    '    default-ttl 0',
    '    # the supervisor must run: the create lock records carry a TTL',
    `    nsup-period ${o.nsupPeriodSeconds}`,
    '    # B x 68-byte slots + the tx bytes when not external + small bins, whole MiB (cdk/config.ts)',
    `    max-record-size ${o.maxRecordSize}`,
    '    # per-record command queue before KEY_BUSY: a fan-out parent queues rather than bounces (docs/settings.md)',
    `    transaction-pending-limit ${TRANSACTION_PENDING_LIMIT}`,
    '    # the primary and secondary indexes stay in RAM (Community Edition: no flash/pmem index)',
    '    storage-engine device {',
    DEVICES_PLACEHOLDER,
    '        # no eviction: a UTXO store must not drop records',
    '        evict-used-pct 0',
    '        stop-writes-used-pct 80',
    '    }',
    '}',
    '',
  ].join('\n');
}

/** The SSM parameter names under a prefix (`/bsv-utxo-store/<stage>/aerospike`). */
export function parameterNames(prefix: string) {
  return {
    conf: `${prefix}/conf`,
    /** `<url> <sha256>` of the server+tools package */
    package: `${prefix}/package`,
    /** `<url> <sha256>` of the exporter RPM */
    exporterPackage: `${prefix}/exporter-package`,
    bootstrap: `${prefix}/bootstrap`,
    devicesScript: `${prefix}/aerospike-devices`,
    applyConfigScript: `${prefix}/aerospike-apply-config`,
    /** cdk/node-watchdog.ts (decision 0007) */
    watchdogScript: `${prefix}/aerospike-watchdog`,
    agentConfig: `${prefix}/cloudwatch-agent`,
  };
}

/** Enterprise Edition only: the feature key, a SecureString the operator creates (not in the template). */
export function featureKeyParameterName(prefix: string): string {
  return `${prefix}/feature-key`;
}

/**
 * One shell word for `value`: single-quoted, a `'` inside written as `'\''`. Every value of the configuration that a
 * script names goes through it (the configuration also refuses characters outside each value's own set, cdk/config).
 */
export function shq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** REGION from the instance metadata (IMDSv2) unless already set (tests, SSM Run Command sets AWS_REGION). */
export const IMDS_REGION = [
  'REGION=${REGION:-${AWS_REGION:-}}',
  'if [ -z "$REGION" ]; then',
  '  TOKEN=$(curl -fsS -X PUT http://169.254.169.254/latest/api/token -H "X-aws-ec2-metadata-token-ttl-seconds: 60")',
  '  REGION=$(curl -fsS -H "X-aws-ec2-metadata-token: $TOKEN" http://169.254.169.254/latest/meta-data/placement/region)',
  'fi',
].join('\n');

const getParam = (name: string): string =>
  `aws ssm get-parameter --region "$REGION" --name ${shq(name)} --query Parameter.Value --output text`;

/**
 * The whole user data of node `index` (1-based): fetch the bootstrap from SSM, check it against the SHA-256 pinned in
 * the cluster stack (cdk/node-pins.ts) and run it. Never changes.
 */
export function renderUserData(prefix: string, index: number, hostName: string, pins: Pins): string[] {
  return [
    'set -euo pipefail',
    IMDS_REGION,
    pinFunctions(pins),
    `fetch_pinned ${shq(parameterNames(prefix).bootstrap)} bootstrap /usr/local/sbin/aerospike-bootstrap`,
    'chmod 700 /usr/local/sbin/aerospike-bootstrap',
    `exec /usr/local/sbin/aerospike-bootstrap ${shq(prefix)} ${index} ${shq(hostName)}`,
  ];
}

/**
 * The device check: the instance-store devices by stable path (/dev/disk/by-id, named after the device's model and
 * serial by the udev rules; /dev/nvmeXn1 names follow probe order and are not stable across boots). `record`
 * writes DEVICES_FILE (first boot); `check` (ExecStartPre of aerospike.service) refuses to start when the list
 * differs: a device that vanished or was replaced (new serial after a stop/start or a host change) means the data is
 * gone and the node must be rebuilt by the runbook, not started on blank or foreign devices. `BYID` is overridable
 * for tests.
 */
export function renderDeviceScript(): string {
  return `#!/bin/bash
# aerospike-devices record|check|list: the NVMe instance-store devices by stable /dev/disk/by-id path
set -euo pipefail
BYID=\${BYID:-/dev/disk/by-id}
DEVICES_FILE=\${DEVICES_FILE:-${DEVICES_FILE}}
list() {
  # one link per whole device: the model-and-serial link (nvme-Amazon_EC2_NVMe_Instance_Storage_<serial>), not the
  # namespace (_1), partition (-part) or eui links
  for link in "$BYID"/nvme-Amazon_EC2_NVMe_Instance_Storage_*; do
    [ -e "$link" ] || continue
    case "$link" in *-part*|*_[0-9]) continue ;; esac
    echo "$link"
  done | sort
}
case "\${1:-}" in
  list) list ;;
  record)
    devices=$(list)
    if [ -z "$devices" ]; then echo "aerospike-devices: no NVMe instance-store device under $BYID" >&2; exit 1; fi
    echo "$devices" > "$DEVICES_FILE"
    ;;
  check)
    if [ ! -s "$DEVICES_FILE" ]; then echo "aerospike-devices: $DEVICES_FILE missing: not bootstrapped" >&2; exit 1; fi
    if ! diff <(list) "$DEVICES_FILE" >&2; then
      echo "aerospike-devices: the instance-store devices changed since first boot (above: < now, > recorded);" \\
        "refusing to start: rebuild this node (README, runbook: replace a failed node)" >&2
      exit 1
    fi
    ;;
  *) echo "usage: aerospike-devices record|check|list" >&2; exit 2 ;;
esac
`;
}

/**
 * Writes /etc/aerospike/aerospike.conf from the conf in SSM with the recorded devices; with `restart`, restarts
 * Aerospike and waits until the cluster is whole again and migrations are done (the rolling step of the runbook).
 */
export function renderApplyConfigScript(prefix: string, nodeCount: number, pins: Pins): string {
  const names = parameterNames(prefix);
  return `#!/bin/bash
# aerospike-apply-config [restart]: the conf from ${names.conf} (as pinned in the stack) with this node's devices
set -euo pipefail
${IMDS_REGION}
${pinFunctions(pins)}
CONF_DIR=\${CONF_DIR:-/etc/aerospike}
fetch_pinned ${shq(names.conf)} conf "$CONF_DIR/aerospike.conf.template"
while IFS= read -r line; do
  if [ "$line" = "${DEVICES_PLACEHOLDER}" ]; then
    while IFS= read -r d; do echo "        device $d"; done < "${DEVICES_FILE}"
  else
    printf '%s\\n' "$line"
  fi
done < "$CONF_DIR/aerospike.conf.template" > "$CONF_DIR/aerospike.conf.new"
mv "$CONF_DIR/aerospike.conf.new" "$CONF_DIR/aerospike.conf"
if [ "\${1:-}" = restart ]; then
  systemctl restart aerospike
  # wait for this node to rejoin and for migrations to finish before the operator moves to the next node
  # cluster-stable answers the cluster key once all ${nodeCount} nodes agree and no migration is pending, else ERROR
  for i in $(seq 1 720); do
    out=$(asinfo -v 'cluster-stable:size=${nodeCount};ignore-migrations=false' 2>/dev/null || true)
    case "$out" in ''|ERROR*) sleep 10 ;; *) echo "cluster stable ($out)"; exit 0 ;; esac
  done
  echo "aerospike-apply-config: the cluster is not stable after 2 hours" >&2
  exit 1
fi
`;
}

/** The first-boot script (fetched from SSM by the user data). */
export function renderBootstrap(o: {
  prefix: string;
  logGroupName: string;
  /** Enterprise strong consistency: the feature key from SSM; the last node sets the roster once all nodes joined */
  strongConsistency?: { namespace: string; nodeCount: number };
  /** the SHA-256 pins of the node settings (cdk/node-pins.ts) */
  pins: Pins;
}): string {
  const names = parameterNames(o.prefix);
  const sc = o.strongConsistency;
  const featureKey = sc
    ? `# Enterprise Edition: the feature key (SSM SecureString ${featureKeyParameterName(o.prefix)}) before the first start
aws ssm get-parameter --region "$REGION" --with-decryption --name ${shq(featureKeyParameterName(o.prefix))} --query Parameter.Value \
  --output text > ${FEATURE_KEY_FILE}
chmod 600 ${FEATURE_KEY_FILE}
`
    : '';
  const roster = sc
    ? `
# strong consistency: the roster is every node; the last node sets it once all ${sc.nodeCount} nodes are in the cluster
# (aerospike.com/docs/database/manage/namespace/consistency: roster-set, then recluster)
if [ "$INDEX" = "${sc.nodeCount}" ]; then
  for i in $(seq 1 360); do
    size=$(asinfo -v 'statistics' | tr ';' '\n' | sed -n 's/^cluster_size=//p')
    [ "$size" = "${sc.nodeCount}" ] && break
    sleep 10
  done
  [ "$size" = "${sc.nodeCount}" ] || { echo "aerospike-bootstrap: only $size of ${sc.nodeCount} nodes joined: roster not set" >&2; exit 1; }
  observed=$(asinfo -v 'roster:namespace=${sc.namespace}' | tr ':' '\n' | sed -n 's/^observed_nodes=//p')
  asinfo -v "roster-set:namespace=${sc.namespace};nodes=$observed"
  asinfo -v 'recluster:'
  echo "aerospike-bootstrap: roster of ${sc.namespace} set to $observed"
fi
`
    : '';
  return `#!/bin/bash
# aerospike-bootstrap <prefix> <index> <hostname>: install, verify, configure and start one node (first boot only)
set -euo pipefail
exec > >(tee -a /var/log/aerospike-bootstrap.log) 2>&1
PREFIX=$1; INDEX=$2; HOSTNAME_FQDN=$3
hostnamectl set-hostname "$HOSTNAME_FQDN"
${IMDS_REGION}
${pinFunctions(o.pins)}
fetch() { # fetch <url> <file>
  case "$1" in
    s3://*) aws s3 cp --region "$REGION" "$1" "$2" ;;
    *) curl -fsSL --retry 10 --retry-delay 6 -o "$2" "$1" ;;
  esac
}
verify() { # verify <file> <sha256>: a package is never run unless it is the pinned one
  echo "$2  $1" | sha256sum -c - || { echo "aerospike-bootstrap: $1 does not match its pinned SHA-256" >&2; exit 1; }
}
# tar/gzip on the AMI; dnf reaches the Amazon Linux repositories (in S3) even without NAT
dnf install -y tar gzip amazon-cloudwatch-agent
# the URL from SSM, the checksum as pinned in the stack (a parameter write cannot swap the package)
read -r PKG_URL _ <<< "$(${getParam(names.package)})"
PKG_SHA=$(pinned package)
fetch "$PKG_URL" /tmp/aerospike.tgz
verify /tmp/aerospike.tgz "$PKG_SHA"
mkdir -p /tmp/aerospike && tar -xzf /tmp/aerospike.tgz --strip-components=1 -C /tmp/aerospike
(cd /tmp/aerospike && ./asinstall)
read -r EXP_URL _ <<< "$(${getParam(names.exporterPackage)})"
EXP_SHA=$(pinned exporter-package)
fetch "$EXP_URL" /tmp/aerospike-prometheus-exporter.rpm
verify /tmp/aerospike-prometheus-exporter.rpm "$EXP_SHA"
rpm -Uvh /tmp/aerospike-prometheus-exporter.rpm

# the node scripts (device check, apply-config, watchdog), from SSM, as pinned in the stack
fetch_pinned ${shq(names.devicesScript)} aerospike-devices /usr/local/sbin/aerospike-devices
fetch_pinned ${shq(names.applyConfigScript)} aerospike-apply-config /usr/local/sbin/aerospike-apply-config
fetch_pinned ${shq(names.watchdogScript)} aerospike-watchdog /usr/local/sbin/aerospike-watchdog
chmod 755 /usr/local/sbin/aerospike-devices /usr/local/sbin/aerospike-apply-config /usr/local/sbin/aerospike-watchdog

# instance-store devices by stable path, recorded once; every later start must find the same list
/usr/local/sbin/aerospike-devices record
# a new device's first 8 MiB (the Aerospike header) must be zeroed before first use
while IFS= read -r d; do blkdiscard "$d" || dd if=/dev/zero of="$d" bs=1M count=8 oflag=direct; done < ${DEVICES_FILE}
mkdir -p /etc/systemd/system/aerospike.service.d /var/log/aerospike
cat > /etc/systemd/system/aerospike.service.d/devices.conf <<'UNIT'
[Service]
ExecStartPre=/usr/local/sbin/aerospike-devices check
UNIT
${watchdogUnitsScript()}systemctl daemon-reload
${featureKey}/usr/local/sbin/aerospike-apply-config

# metrics (exporter on :${EXPORTER_PORT}, scraped by the CloudWatch agent) and logs (${AEROSPIKE_LOG} -> ${o.logGroupName})
cat > /etc/aerospike-prometheus-exporter/prometheus-scrape.yaml <<'SCRAPE'
global:
  scrape_interval: 60s
  scrape_timeout: 10s
scrape_configs:
  - job_name: aerospike
    static_configs:
      - targets: ['localhost:${EXPORTER_PORT}']
SCRAPE
mkdir -p "$(dirname ${AGENT_CONFIG_FILE})"
fetch_pinned ${shq(names.agentConfig)} cloudwatch-agent ${AGENT_CONFIG_FILE}
/opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl -a fetch-config -m ec2 -s -c "file:${AGENT_CONFIG_FILE}"

systemctl enable aerospike aerospike-prometheus-exporter aerospike-watchdog
systemctl start aerospike
systemctl start aerospike-watchdog
systemctl start aerospike-prometheus-exporter
echo "aerospike-bootstrap: node $INDEX started"
${roster}`;
}

/** Exporter metrics kept in CloudWatch (EMF), and the names the alarms and the dashboard use. */
export const AEROSPIKE_METRICS = {
  clusterSize: 'aerospike_node_stats_cluster_size',
  clientConnections: 'aerospike_node_stats_client_connections',
  stopWrites: 'aerospike_namespace_stop_writes',
  deviceUsedPct: 'aerospike_namespace_data_used_pct',
  memoryUsedPct: 'aerospike_namespace_index_used_pct',
  migrateRx: 'aerospike_namespace_migrate_rx_partitions_remaining',
  migrateTx: 'aerospike_namespace_migrate_tx_partitions_remaining',
  clientWriteErrors: 'aerospike_namespace_client_write_error',
  clientUdfErrors: 'aerospike_namespace_client_udf_error',
  nodeUp: 'aerospike_node_up',
} as const;

/** The CloudWatch agent's configuration: exporter metrics as EMF into `namespace`, Aerospike's log file. */
export function renderAgentConfig(o: { metricsNamespace: string; logGroupName: string }) {
  const m = AEROSPIKE_METRICS;
  return {
    agent: { metrics_collection_interval: 60 },
    logs: {
      logs_collected: {
        files: {
          collect_list: [
            { file_path: AEROSPIKE_LOG, log_group_name: o.logGroupName, log_stream_name: '{hostname}/aerospike' },
            {
              file_path: '/var/log/aerospike-bootstrap.log',
              log_group_name: o.logGroupName,
              log_stream_name: '{hostname}/bootstrap',
            },
          ],
        },
      },
      metrics_collected: {
        prometheus: {
          prometheus_config_path: '/etc/aerospike-prometheus-exporter/prometheus-scrape.yaml',
          log_group_name: `${o.logGroupName}/prometheus`,
          emf_processor: {
            metric_namespace: o.metricsNamespace,
            metric_declaration: [
              {
                source_labels: ['job'],
                label_matcher: '^aerospike$',
                // per cluster (alarms: Minimum/Maximum over the nodes) and per node (dashboard)
                dimensions: [['cluster_name'], ['cluster_name', 'service']],
                metric_selectors: [`^${m.clusterSize}$`, `^${m.clientConnections}$`, `^${m.nodeUp}$`],
              },
              {
                source_labels: ['job'],
                label_matcher: '^aerospike$',
                dimensions: [
                  ['cluster_name', 'ns'],
                  ['cluster_name', 'ns', 'service'],
                ],
                metric_selectors: [
                  `^${m.stopWrites}$`,
                  `^${m.deviceUsedPct}$`,
                  `^${m.memoryUsedPct}$`,
                  `^${m.migrateRx}$`,
                  `^${m.migrateTx}$`,
                  `^${m.clientWriteErrors}$`,
                  `^${m.clientUdfErrors}$`,
                ],
              },
            ],
          },
        },
      },
    },
  };
}
