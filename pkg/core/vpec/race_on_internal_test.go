//go:build race

package vpec

// raceOn says the race detector is on: it changes what allocates
// (sync.Pool drops items at random), so allocation bounds do not hold.
const raceOn = true
