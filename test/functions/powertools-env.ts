/**
 * Imported first by the handler tests: Powertools reads these when lib/http/observability is loaded. Metrics are
 * enabled (EMF on stdout, asserted by the tests) and the log level is INFO, whatever an earlier test file in the
 * same worker set.
 */
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
delete process.env.POWERTOOLS_DEV;
