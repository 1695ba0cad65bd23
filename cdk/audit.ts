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
