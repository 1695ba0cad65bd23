/**
 * Alarms on control-plane calls recorded by CloudTrail (docs/security.md, docs/runbook.md): an EventBridge rule on
 * the default bus matching "AWS API Call via CloudTrail" events, and a CloudWatch alarm on the rule's MatchedEvents
 * (AWS/Events, dimension RuleName; the rule has no target: not yet verified in AWS that a rule without
 * targets reports MatchedEvents, docs/deploy.md "First real deployment"). EventBridge receives these events only while a
 * CloudTrail trail records management events in the region (docs/deploy.md): without one the alarms never fire.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

export interface AuditAlarmProps {
  description: string;
  /** the event source (aws.sts, aws.ssm, ...) */
  source: string;
  eventNames: string[];
  /** more of the CloudTrail record to match (`detail.requestParameters`, `detail.sourceIPAddress`, ...) */
  detail?: Record<string, unknown>;
  topic?: sns.ITopic;
}

export class AuditAlarm extends Construct {
  readonly rule: events.Rule;
  readonly alarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: AuditAlarmProps) {
    super(scope, id);
    this.rule = new events.Rule(this, 'Rule', {
      description: props.description,
      eventPattern: {
        source: [props.source],
        detailType: ['AWS API Call via CloudTrail'],
        detail: {
          eventSource: [`${props.source.slice(4)}.amazonaws.com`],
          eventName: props.eventNames,
          ...props.detail,
        },
      },
    });
    this.alarm = new cloudwatch.Metric({
      namespace: 'AWS/Events',
      metricName: 'MatchedEvents',
      dimensionsMap: { RuleName: this.rule.ruleName },
      statistic: 'Sum',
      period: Duration.minutes(5),
    }).createAlarm(this, 'Alarm', {
      alarmDescription: `${props.description} (docs/runbook.md)`,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (props.topic) this.alarm.addAlarmAction(new actions.SnsAction(props.topic));
  }
}

/**
 * An alarm on every admin operation the admin function performed, however it was invoked (docs/runbook.md
 * "AdminOperation"): a metric filter on the function's own log lines ("admin operation", lib/http/middleware.ts).
 * AdminRoleAssumed sees only callers that assume the admin role; a configured admin invoker calls the function
 * directly and never does, and an invoker may forge an API Gateway event (docs/security.md): the function's log is
 * the one place every admin operation is written.
 */
export class AdminOperationAlarm extends Construct {
  readonly filter: logs.MetricFilter;
  readonly alarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: { logGroup: logs.ILogGroup; stage: string; topic?: sns.ITopic }) {
    super(scope, id);
    this.filter = new logs.MetricFilter(this, 'Filter', {
      logGroup: props.logGroup,
      filterPattern: logs.FilterPattern.stringValue('$.message', '=', 'admin operation'),
      metricNamespace: 'bsv-utxo-store/audit',
      metricName: `AdminOperations-${props.stage}`,
      metricValue: '1',
    });
    this.alarm = this.filter.metric({ statistic: 'Sum', period: Duration.minutes(5) }).createAlarm(this, 'Alarm', {
      alarmDescription: `An admin operation ran on the ${props.stage} store, by the admin role or a direct invoker (docs/runbook.md)`,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (props.topic) this.alarm.addAlarmAction(new actions.SnsAction(props.topic));
  }
}
