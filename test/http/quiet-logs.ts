/**
 * Imported first by the test files that run the local server: Powertools reads these when lib/http/observability is
 * loaded. The handlers' request log lines and EMF metrics (asserted by the handler tests in test/functions, which set
 * their own values in powertools-env.ts) would otherwise print a few lines per request into the test output.
 */
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
