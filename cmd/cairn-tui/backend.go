package main

import (
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui"
)

// The client is the TUI's backend as it is.
var _ tui.Backend = (*client.Client)(nil)
