package shell

import (
	"sync"

	"github.com/cairn-dev/cairn"
)

// MemoryKeeper is a Keeper in memory, for one program or, in a server,
// for the sessions of one SSH key. It holds at most memoryKeeps secrets;
// past that the oldest is dropped (that shell can still be watched, and
// ends after its detached timeout). Safe for concurrent sessions.
type MemoryKeeper struct {
	mu    sync.Mutex
	infos map[string]cairn.ShellSessionInfo
	order []string // shell IDs, oldest first
}

// memoryKeeps bounds a MemoryKeeper: far more shells than the server's
// shell.limits let one operator hold at once.
const memoryKeeps = 64

// NewMemoryKeeper returns an empty MemoryKeeper.
func NewMemoryKeeper() *MemoryKeeper {
	return &MemoryKeeper{infos: make(map[string]cairn.ShellSessionInfo)}
}

// Keep holds info, replacing what was held for its shell.
func (k *MemoryKeeper) Keep(info cairn.ShellSessionInfo) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.infos[info.ShellID]; !ok {
		k.order = append(k.order, info.ShellID)
	}
	k.infos[info.ShellID] = info
	for len(k.order) > memoryKeeps {
		delete(k.infos, k.order[0])
		k.order = k.order[1:]
	}
	return nil
}

// Lookup returns what is held for shellID.
func (k *MemoryKeeper) Lookup(shellID string) (cairn.ShellSessionInfo, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	info, ok := k.infos[shellID]
	return info, ok
}

// Forget drops what is held for shellID.
func (k *MemoryKeeper) Forget(shellID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.infos[shellID]; !ok {
		return
	}
	delete(k.infos, shellID)
	for i, id := range k.order {
		if id == shellID {
			k.order = append(k.order[:i], k.order[i+1:]...)
			break
		}
	}
}
