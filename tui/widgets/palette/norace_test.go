//go:build !race

package palette_test

// raceFactor widens the key press budget under -race (TUI.md §8).
const raceFactor = 1
