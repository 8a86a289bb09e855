//go:build !race

package vpec

// raceOn says the race detector is on (race_on_internal_test.go).
const raceOn = false
