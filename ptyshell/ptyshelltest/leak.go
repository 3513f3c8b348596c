package ptyshelltest

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Leaks returns the stacks of goroutines still running code of the module's
// ptyshell packages (the package, its tests and these helpers), other than
// the caller. Goroutines that are merely finishing get until timeout to go;
// polling is the only way to watch another goroutine end.
func Leaks(timeout time.Duration) []string {
	deadline := time.Now().Add(timeout)
	for {
		leaks := ptyshellGoroutines()
		if len(leaks) == 0 || time.Now().After(deadline) {
			return leaks
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// CheckLeaks is for TestMain: after m.Run, it fails the run when goroutines
// are left behind.
func CheckLeaks(code int) int {
	if code != 0 {
		return code
	}
	if leaks := Leaks(5 * time.Second); len(leaks) > 0 {
		fmt.Printf("%d goroutines left behind:\n\n%s\n", len(leaks), strings.Join(leaks, "\n\n"))
		return 1
	}
	return 0
}

func ptyshellGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var leaks []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 { // the caller
			continue
		}
		if strings.Contains(g, "cairn-dev/cairn/ptyshell") && !strings.Contains(g, "ptyshelltest.ptyshellGoroutines") {
			leaks = append(leaks, g)
		}
	}
	return leaks
}
