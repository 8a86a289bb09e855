package server

// Uninstrumented configures a server without metrics, spans or the store
// and TSA wrappers: the baseline of BenchmarkIngestObservability.
func Uninstrumented(c *Config) { c.uninstrumented = true }
