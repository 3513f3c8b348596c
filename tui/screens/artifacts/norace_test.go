//go:build !race

package artifacts_test

// raceFactor widens the key press budget under -race.
const raceFactor = 1
