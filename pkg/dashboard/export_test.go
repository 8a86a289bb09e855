package dashboard

// Busy takes n bytes of d's VerifyBytes, as a running verification
// would, and returns the function that gives them back.
func (d *Dashboard) Busy(n int64) func() {
	if !d.busy.try(n) {
		panic("dashboard test: Busy over VerifyBytes")
	}
	return func() { d.busy.release(n) }
}
