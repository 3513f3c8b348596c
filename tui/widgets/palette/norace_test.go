//go:build !race

package palette_test

// raceFactor widens the key press budget under -race.
const raceFactor = 1
