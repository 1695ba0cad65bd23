/**
 * CloudWatch dashboard and alarms: API requests/errors by route, spend latency, signal queue depth/age, DLQ depths,
 * cleanup deleted/kept per pass (EMF metrics of lib/cleanup/report.ts, emitted by Powertools Metrics with its default
 * `service` dimension), spends refused by the acknowledgement guard by reason (SpendsRefused, lib/http/observability.ts), the Aerospike cluster's own metrics (exporter -> CloudWatch agent, cdk/cluster-alarms.ts has
 * their alarms); alarms notify the optional SNS topic of the cluster stack (email from the config).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { AEROSPIKE_METRICS } from './aerospike-scripts';
import { ROUTES } from './api';
import { aerospikeMetric } from './cluster-alarms';
import type { FunctionName, UtxoStoreConfig } from './config';

export interface ObservabilityProps {
  config: UtxoStoreConfig;
  restApiName: string;
  stageName: string;
  functions: Record<FunctionName, lambda.IFunction>;
  signalQueue: sqs.IQueue;
  signalDlq: sqs.IQueue;
  cleanupDlq: sqs.IQueue;
  clusterName: string;
  aerospikeMetricsNamespace: string;
  topic?: sns.ITopic;
}

const MINUTE = Duration.minutes(1);

/**
 * Consecutive minutes with spends refused by the acknowledgement guard before the SpendsRefused alarm: longer than
 * any measured refusal window of a routine event or a partition (at most 8.5 s, bounded at about 14 s per event:
 * docs/reliability.md), so the alarm means a state that does not heal on its own (docs/runbook.md).
 */
export const SPENDS_REFUSED_ALARM_MINUTES = 3;

export class Observability extends Construct {
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly topic?: sns.ITopic;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { config } = props;
    const ns = config.powertoolsMetricsNamespace;
    const service = config.powertoolsServiceName;

    const apiMetric = (metricName: string, method?: string, resource?: string, statistic = 'Sum'): cloudwatch.Metric =>
      new cloudwatch.Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        statistic,
        period: MINUTE,
        dimensionsMap: {
          ApiName: props.restApiName,
          Stage: props.stageName,
          ...(method && resource ? { Method: method, Resource: resource } : {}),
        },
      });
    const emf = (metricName: string): cloudwatch.Metric =>
      new cloudwatch.Metric({
        namespace: ns,
        metricName,
        statistic: 'Sum',
        period: MINUTE,
        dimensionsMap: { service },
      });

    // ---- alarms
    this.topic = props.topic;
    const alarm = (
      name: string,
      metric: cloudwatch.Metric | cloudwatch.MathExpression,
      threshold: number,
      description: string,
      evaluationPeriods = 1,
    ): cloudwatch.Alarm => {
      const a = metric.createAlarm(this, name, {
        alarmDescription: description,
        threshold,
        evaluationPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      if (this.topic) {
        a.addAlarmAction(new actions.SnsAction(this.topic));
        a.addOkAction(new actions.SnsAction(this.topic));
      }
      this.alarms.push(a);
      return a;
    };

    const signalDlqDepth = props.signalDlq.metricApproximateNumberOfMessagesVisible({
      period: MINUTE,
      statistic: 'Maximum',
    });
    const cleanupDlqDepth = props.cleanupDlq.metricApproximateNumberOfMessagesVisible({
      period: MINUTE,
      statistic: 'Maximum',
    });
    const queueDepth = props.signalQueue.metricApproximateNumberOfMessagesVisible({
      period: MINUTE,
      statistic: 'Maximum',
    });
    const queueAge = props.signalQueue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' });
    const errorRate = new cloudwatch.MathExpression({
      expression: 'IF(requests > 0, 100 * errors / requests, 0)',
      usingMetrics: { errors: apiMetric('5XXError'), requests: apiMetric('Count') },
      label: 'API 5xx error rate (%)',
      period: MINUTE,
    });
    const cleanupErrors = props.functions.cleanup.metricErrors({ period: MINUTE, statistic: 'Sum' });

    alarm('SignalDlqNotEmpty', signalDlqDepth, 0, 'Signals failed repeatedly and are in the signal DLQ');
    alarm('CleanupDlqNotEmpty', cleanupDlqDepth, 0, 'Cleanup invocations failed and are in the cleanup DLQ');
    alarm(
      'ApiErrorRate',
      errorRate,
      config.apiErrorRateAlarmPercent,
      `API 5xx responses above ${config.apiErrorRateAlarmPercent}% of requests`,
      3,
    );
    alarm(
      'SignalQueueAge',
      queueAge,
      config.signalAgeAlarmSeconds,
      `The oldest signal is older than ${config.signalAgeAlarmSeconds} s: the consumer is behind or failing`,
    );
    alarm('CleanupFailures', cleanupErrors, 0, 'A scheduled cleanup pass (or one of its shards) failed', 3);
    alarm(
      'CleanupRangesFailed',
      emf('CleanupRangesFailed'),
      0,
      'A cleanup pass could not query the index of some partition ranges (rangeError in its report and log: an ' +
        'index not ready, a query past its deadline); nothing is deleted there until it can. See docs/failure-modes.md',
    );
    // SpendsRefused (lib/http/observability.ts emitSpendRefused): txs answered in doubt by the acknowledgement guard
    alarm(
      'SpendsRefused',
      emf('SpendsRefused'),
      0,
      `Spends refused by the acknowledgement guard (503 in doubt) in each of ${SPENDS_REFUSED_ALARM_MINUTES} ` +
        'consecutive minutes, longer than any measured cluster event: a node the functions reach is an orphan or ' +
        'between clusters, the nodes disagree, or no majority answers. The dashboard says which (by reason); see ' +
        'docs/runbook.md, "Spends answer 503"',
      SPENDS_REFUSED_ALARM_MINUTES,
    );
    alarm(
      'DoubleAcknowledgedOutputs',
      emf('DoubleAcknowledgedOutputs'),
      0,
      'POST /v1/spends/verify found outputs acknowledged to two spenders after a cluster change (a split brain on ' +
        'Community Edition): the losers and their descendants were marked conflicting; see ' +
        'docs/decisions/0006-partitions-on-community-edition.md',
    );

    // ---- dashboard
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `bsv-utxo-store-${config.stage}`,
      defaultInterval: Duration.hours(3),
    });
    const w = (title: string, left: cloudwatch.IMetric[], right?: cloudwatch.IMetric[]): cloudwatch.GraphWidget =>
      new cloudwatch.GraphWidget({ title, left, right, width: 12, height: 6 });

    this.dashboard.addWidgets(
      w(
        'Requests by route',
        ROUTES.map((r) => apiMetric('Count', r.method, r.path).with({ label: `${r.method} ${r.path}` })),
      ),
      w(
        'Errors by route (5xx; 4xx dashed on the right)',
        [...ROUTES.map((r) => apiMetric('5XXError', r.method, r.path).with({ label: `5xx ${r.method} ${r.path}` }))],
        ROUTES.map((r) => apiMetric('4XXError', r.method, r.path).with({ label: `4xx ${r.method} ${r.path}` })),
      ),
    );
    this.dashboard.addWidgets(
      w(
        'Spend latency (API, ms)',
        [
          apiMetric('Latency', 'POST', '/v1/spends', 'p50').with({ label: 'p50' }),
          apiMetric('Latency', 'POST', '/v1/spends', 'p99').with({ label: 'p99' }),
        ],
        [
          props.functions.spend.metricDuration({ statistic: 'p50', period: MINUTE, label: 'Lambda p50' }),
          props.functions.spend.metricDuration({ statistic: 'p99', period: MINUTE, label: 'Lambda p99' }),
        ],
      ),
      w('API 5xx error rate (%)', [errorRate]),
    );
    // one series per reason the store emitted (lib/store/ack-guard.ts AckRefusalReason), whatever they are
    const refusedByReason = new cloudwatch.MathExpression({
      expression: `SEARCH('{${ns},service,reason} service="${service}" MetricName="SpendsRefused"', 'Sum', 60)`,
      usingMetrics: {},
      label: '',
      period: MINUTE,
    });
    this.dashboard.addWidgets(
      w(
        'Spends refused by the acknowledgement guard (txs per minute, by reason; all reasons on the right)',
        [refusedByReason],
        [emf('SpendsRefused').with({ label: 'all reasons' })],
      ),
    );
    this.dashboard.addWidgets(
      w('Signal queue depth', [queueDepth.with({ label: 'visible' })], [queueAge.with({ label: 'oldest (s)' })]),
      w('DLQ depth', [signalDlqDepth.with({ label: 'signal DLQ' }), cleanupDlqDepth.with({ label: 'cleanup DLQ' })]),
    );
    const kept = new cloudwatch.MathExpression({
      // CleanupKept_<reason>: a partial (unquoted) match on the name token "Kept"; a quoted MetricName is exact
      expression: `SUM(SEARCH('{${ns},service} service="${service}" MetricName=Kept', 'Sum', 60))`,
      usingMetrics: {},
      label: 'kept (all reasons)',
      period: MINUTE,
    });
    this.dashboard.addWidgets(
      w(
        'Cleanup per pass',
        [
          emf('CleanupDeleted').with({ label: 'deleted' }),
          kept,
          emf('CleanupErrors').with({ label: 'errors' }),
          emf('CleanupRangesFailed').with({ label: 'ranges failed' }),
          emf('CleanupPreserveExpired').with({ label: 'preserve expired' }),
        ],
        [cleanupErrors.with({ label: 'function errors' })],
      ),
      w(
        'Function errors and throttles',
        [
          ...Object.entries(props.functions).map(([name, fn]) =>
            fn.metricErrors({ period: MINUTE, statistic: 'Sum', label: `${name} errors` }),
          ),
        ],
        Object.entries(props.functions).map(([name, fn]) =>
          fn.metricThrottles({ period: MINUTE, statistic: 'Sum', label: `${name} throttles` }),
        ),
      ),
    );
    const as = { metricsNamespace: props.aerospikeMetricsNamespace, clusterName: props.clusterName };
    const asNs = { ...as, namespace: config.aerospike.namespace };
    this.dashboard.addWidgets(
      w(
        'Aerospike: cluster size (min over nodes) and client connections (max)',
        [aerospikeMetric(as, AEROSPIKE_METRICS.clusterSize, 'Minimum').with({ label: 'cluster size' })],
        [aerospikeMetric(as, AEROSPIKE_METRICS.clientConnections, 'Maximum').with({ label: 'client connections' })],
      ),
      w(
        `Aerospike ${config.aerospike.namespace}: device and index use %, stop-writes`,
        [
          aerospikeMetric(asNs, AEROSPIKE_METRICS.deviceUsedPct, 'Maximum').with({ label: 'device used %' }),
          aerospikeMetric(asNs, AEROSPIKE_METRICS.memoryUsedPct, 'Maximum').with({ label: 'index used %' }),
        ],
        [aerospikeMetric(asNs, AEROSPIKE_METRICS.stopWrites, 'Maximum').with({ label: 'stop-writes' })],
      ),
    );
    this.dashboard.addWidgets(
      w(`Aerospike ${config.aerospike.namespace}: migrations remaining`, [
        aerospikeMetric(asNs, AEROSPIKE_METRICS.migrateRx, 'Sum').with({ label: 'rx partitions' }),
        aerospikeMetric(asNs, AEROSPIKE_METRICS.migrateTx, 'Sum').with({ label: 'tx partitions' }),
      ]),
      w(`Aerospike ${config.aerospike.namespace}: client errors`, [
        aerospikeMetric(asNs, AEROSPIKE_METRICS.clientWriteErrors, 'Sum').with({ label: 'write errors' }),
        aerospikeMetric(asNs, AEROSPIKE_METRICS.clientUdfErrors, 'Sum').with({ label: 'UDF errors' }),
      ]),
    );
  }
}
