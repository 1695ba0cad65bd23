/**
 * The Aerospike cluster's own health in CloudWatch: alarms on the exporter's metrics (scraped by the CloudWatch agent
 * on each node, cdk/aerospike-scripts.ts renderAgentConfig) and on the nodes' EC2 status checks.
 *
 * - cluster size below nodeCount (Minimum over the nodes; no data at all is breaching: the exporter or agent is down)
 * - stop-writes on the namespace (any node)
 * - device use above deviceUsedAlarmPercent (stop-writes-used-pct is 80)
 * - client connections above CONNECTIONS_ALARM_SHARE of proto-fd-max (a node refuses connections past it)
 * - a refill: migrations pending on some node for REFILL_ALARM_MINUTES (a replaced node, a node the watchdog wiped, or
 *   the migrations after a restart on a large store): until they end some partitions are short of a copy, and a
 *   second node must not be stopped (docs/runbook.md; docs/reliability.md, durability)
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { AEROSPIKE_METRICS } from './aerospike-scripts';
import { CONNECTIONS_ALARM_SHARE, type AerospikeConfig } from './config';

export interface ClusterAlarmsProps {
  aerospike: AerospikeConfig;
  clusterName: string;
  metricsNamespace: string;
  nodes: ec2.Instance[];
  topic?: sns.ITopic;
}

const MINUTE = Duration.minutes(1);

/**
 * Minutes of pending migrations before the refill alarm: longer than the migrations after a restart of a small store
 * (about 70 s with 400,000 records, docs/reliability.md), shorter than any refill of a real one (hours at 10^8 records).
 */
export const REFILL_ALARM_MINUTES = 10;

/** An exporter metric of the cluster (dimension cluster_name, and ns for namespace metrics). */
export function aerospikeMetric(
  o: { metricsNamespace: string; clusterName: string; namespace?: string },
  metricName: string,
  statistic: string,
  extra: Record<string, string> = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: o.metricsNamespace,
    metricName,
    statistic,
    period: MINUTE,
    dimensionsMap: {
      cluster_name: o.clusterName,
      ...(o.namespace ? { ns: o.namespace } : {}),
      ...extra,
    },
  });
}

export class ClusterAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: ClusterAlarmsProps) {
    super(scope, id);
    const a = props.aerospike;
    const node = { metricsNamespace: props.metricsNamespace, clusterName: props.clusterName };
    const ns = { ...node, namespace: a.namespace };
    const add = (
      name: string,
      metric: cloudwatch.Metric,
      threshold: number,
      comparisonOperator: cloudwatch.ComparisonOperator,
      description: string,
      treatMissingData = cloudwatch.TreatMissingData.NOT_BREACHING,
      evaluationPeriods = 3,
    ): void => {
      const alarm = metric.createAlarm(this, name, {
        alarmDescription: description,
        threshold,
        comparisonOperator,
        evaluationPeriods,
        treatMissingData,
      });
      if (props.topic) {
        alarm.addAlarmAction(new actions.SnsAction(props.topic));
        alarm.addOkAction(new actions.SnsAction(props.topic));
      }
      this.alarms.push(alarm);
    };

    add(
      'ClusterSize',
      aerospikeMetric(node, AEROSPIKE_METRICS.clusterSize, 'Minimum'),
      a.nodeCount,
      cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      `Aerospike cluster size below ${a.nodeCount} on some node (a node is down or split off), or no metrics at all`,
      cloudwatch.TreatMissingData.BREACHING,
    );
    add(
      'StopWrites',
      aerospikeMetric(ns, AEROSPIKE_METRICS.stopWrites, 'Maximum'),
      0,
      cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      `Namespace ${a.namespace} is in stop-writes on some node: writes are refused`,
      cloudwatch.TreatMissingData.NOT_BREACHING,
      1,
    );
    add(
      'DeviceUsed',
      aerospikeMetric(ns, AEROSPIKE_METRICS.deviceUsedPct, 'Maximum'),
      a.deviceUsedAlarmPercent,
      cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      `Namespace ${a.namespace} device use above ${a.deviceUsedAlarmPercent}% on some node (stop-writes at 80%): add a node`,
    );
    const connections = Math.floor(a.protoFdMax * CONNECTIONS_ALARM_SHARE);
    add(
      'ClientConnections',
      aerospikeMetric(node, AEROSPIKE_METRICS.clientConnections, 'Maximum'),
      connections,
      cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      `Client connections above ${connections} on some node (proto-fd-max ${a.protoFdMax} refuses more)`,
    );
    add(
      'Refill',
      aerospikeMetric(ns, AEROSPIKE_METRICS.migrateRx, 'Maximum'),
      0,
      cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      `Namespace ${a.namespace}: migrations pending for ${REFILL_ALARM_MINUTES} minutes: a node is refilling ` +
        '(replaced, wiped by its watchdog, or restarted on a large store) and some partitions are short of a copy ' +
        `(replication-factor ${Math.min(a.replicationFactor, a.nodeCount)}): do not stop, restart or replace another ` +
        'node until it clears (docs/runbook.md)',
      cloudwatch.TreatMissingData.NOT_BREACHING,
      REFILL_ALARM_MINUTES,
    );
    props.nodes.forEach((instance, i) =>
      add(
        `Node${i + 1}StatusCheck`,
        new cloudwatch.Metric({
          namespace: 'AWS/EC2',
          metricName: 'StatusCheckFailed',
          dimensionsMap: { InstanceId: instance.instanceId },
          statistic: 'Maximum',
          period: MINUTE,
        }),
        0,
        cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        `Aerospike node ${i + 1} fails its EC2 status checks`,
        cloudwatch.TreatMissingData.NOT_BREACHING,
        2,
      ),
    );
  }
}
