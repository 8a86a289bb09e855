package server

// Uninstrumented configures a server without metrics, spans or the store
// and TSA wrappers: the baseline of BenchmarkIngestObservability.
func Uninstrumented(c *Config) { c.uninstrumented = true }

// SetAppendFault makes every transparency log append of s fail with what
// f returns, while it returns an error (nil f: none).
func SetAppendFault(s *Server, f func() error) {
	if f == nil {
		s.behind.fault.Store(nil)
		return
	}
	s.behind.fault.Store(&f)
}
