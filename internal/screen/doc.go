// Package screen keeps the virtual terminal of one shell session, so that
// a reattaching client can be shown the screen it lost: every byte of the
// session's output goes through Screen.Write, and Screen.Render returns
// bytes that put a fresh terminal of the same size into the same state.
//
// The emulator is github.com/charmbracelet/x/vt (v0.1.0), a maintained
// one; this package adds only what a reattach needs on top of it.
//
// # Evaluation
//
// Compared: real programs run on a PTY at 80×24, TERM=xterm-256color —
// vim (vi -u NONE, insert mode, syntax and line numbers on, text with a
// tab and wide characters typed), top (two refreshes; and resized to
// 100×30 mid-run), less (a page down, then a search with its highlight),
// dash (a prompt, every SGR attribute, 16/256/true colours, wide
// characters, an EL with a background colour, seq 1 3000). Their output
// went (a) into tmux 3.3a, the reference, and into a Screen: the text of
// every row and the cursor (position, visibility, alternate screen) must
// be equal; (b) Render was written into a fresh tmux pane of the size the
// Screen has: its text, its capture with attributes (capture-pane -e),
// the cursor and the modes tmux reports (cursor keys, keypad, autowrap,
// insert, origin, scroll region, mouse modes) must equal those of (a), and
// for dash the newest lines of history too (tests in program_test.go).
//
// Results: vim, top, top resized, less and dash all match on every one of
// these. Found on the way, and handled here:
//
//   - The emulator answers queries (DSR, DA, DECRQM, OSC 10/11/12, in-band
//     resize) into an unbuffered io.Pipe and blocks its Write until
//     someone reads: vim's first cursor-position query hung the session.
//     New closes that pipe, so the answers fail at once and are dropped;
//     the client's terminal answers the program, as in v1. A program
//     that queries while no client is attached gets no answer.
//   - Scrolling costs the emulator a copy of every cell of the screen per
//     line (about 20 µs at 80×24): 2.4 MB/s on seq-like output, where the
//     issue asks for 0.8× of v1. See feed.go: runs of plain output (text,
//     CR, LF, TAB, BS, BEL, SGR, EL) on a main screen that scrolls whole
//     are held back, and lines that more than scrollback+rows further
//     lines follow are replaced by their pen and one CR LF; the result is
//     the same state byte for byte (TestFeederEndsWhereTheEmulatorEnds
//     compares renders against an emulator fed every byte). With it:
//     ~180 MB/s on SGR-dense lines, ~560 MB/s on plain text, 32 KiB
//     writes (BenchmarkScreenThroughput).
//   - The emulator does not expose the hidden main screen while the
//     alternate one is active; a hook snapshots it on the way in, so a
//     render draws the main screen, enters the alternate one, and the
//     program's exit from it shows the right main screen.
//
// What x/vt does not expose, so Render cannot restore it: the pending
// wrap after the last column was written (tmux shows the cursor at
// x = width, the render puts it at width-1; the next character then
// overwrites instead of wrapping); the pen (the SGR in force for the next
// character: the render leaves the default one; vim, top, less and shells
// set it before they write); the cursor saved by DECSC; the character
// sets (G0–G3, SO/SI); tab stops; left/right margins (DECSLRM). Modes
// and the scroll region are not exposed either; they are tracked through
// the emulator's mode callbacks and a DECSTBM hook. Lines are not
// reflowed on resize, nor pulled back from the history when the screen
// grows (tmux does both on the main screen): a full-screen
// program redraws on SIGWINCH, a shell's old lines stay cut.
//
// Memory: the scrollback holds cells of about 80 bytes each; at 80×24 with
// 1 000 full, coloured lines a session holds about 10 MiB of heap
// (TestMemoryPerSession prints it), plus at most 1 MiB of held-back
// output.
//
// Choice: x/vt, with the feeder in front of it. It gets every screen of
// the programs above right; what it lacks for a reattach is exposure, not
// emulation.
package screen
