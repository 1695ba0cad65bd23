/** Imported first by client tests that load the handlers: no EMF lines, handler logs only at WARN. */
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'WARN';
