//go:build !linux

package clicore

// makeReadBuffer returns a buffer of n bytes to read a file into.
func makeReadBuffer(n int) []byte { return make([]byte, n) }
