/**
 * What Lambda sets in an on-demand execution environment, before any module makes its Powertools instances: Powertools
 * counts no cold start without it. Imported first by the tests of the ColdStart metric.
 */
process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
