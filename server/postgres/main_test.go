package postgres_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

func TestMain(m *testing.M) { stacktest.Main(m) }
