package stacktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/server/postgres"
)

// Replicated starts a primary and a synchronous streaming standby of the
// test's own (stack.StartReplicated), with the cairn schema migrated in
// database cairn, and stops them when the test ends. Give it to a server
// with ServerOptions.Replicated.
func Replicated(t testing.TB) *stack.Replicated {
	t.Helper()
	state, err := stateDir()
	Need(t, "PostgreSQL", err)
	dir := filepath.Join(state, "pair-"+strings.ToLower(ulid.Make().String()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pair, err := stack.StartReplicated(ctx, filepath.Join(dir, "primary"), filepath.Join(dir, "standby"), nil, stack.WithoutFsync())
	Need(t, "PostgreSQL", err)
	t.Cleanup(func() {
		if err := pair.Stop(); err != nil {
			t.Errorf("stop the replicated pair: %v", err)
		}
		os.RemoveAll(dir)
	})
	if _, err := postgres.Migrate(ctx, pair.DSN(pair.Primary.Database)); err != nil {
		t.Fatal(fmt.Errorf("migrate the replicated pair: %w", err))
	}
	return pair
}
