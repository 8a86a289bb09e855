package dashboard

// Busy takes n bytes of d's VerifyBytes, as a running verification
// would, and returns the function that gives them back.
func (d *Dashboard) Busy(n int64) func() {
	if !d.busy.Take(n, false) {
		panic("dashboard test: Busy over VerifyBytes")
	}
	return func() { d.busy.Release(n, false) }
}
