package holder

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Environment variables of the holder's container. The configuration
// carries nothing secret; the key is read once and then removed from the
// environment the shell inherits.
const (
	EnvConfig = "CAIRN_HOLDER_CONFIG"
	EnvKey    = "CAIRN_HOLDER_KEY"
)

// The holder's commands of the cairn-sidecar binary.
const (
	CommandHold  = "hold"
	CommandRelay = "relay"
)

// DefaultSocket is where the holder listens, on a private tmpfs of the
// container (mode 0700) that the runtime mounts at DefaultRunDir.
const (
	DefaultRunDir = "/run/cairn"
	DefaultSocket = DefaultRunDir + "/holder.sock"
)

// Config is what one holder runs: the shell, its terminal, its clocks and
// its recording. The server writes it as JSON into EnvConfig.
type Config struct {
	ShellID       string `json:"shell_id"`
	WorkspaceID   string `json:"workspace_id"`
	WorkspaceName string `json:"workspace_name"`
	Container     string `json:"container"`
	// Argv is the user's shell, run on the PTY in the holder's working
	// directory, with the holder's environment minus CAIRN_HOLDER_*.
	Argv       []string `json:"argv"`
	Cols       int      `json:"cols"`
	Rows       int      `json:"rows"`
	Scrollback int      `json:"scrollback"` // lines of history the screen keeps

	Detached    time.Duration `json:"detached"`     // no writer this long ends the shell
	Idle        time.Duration `json:"idle"`         // no input this long ends it; 0: never
	IdleWarning time.Duration `json:"idle_warning"` // notice before the idle end
	MaxLifetime time.Duration `json:"max_lifetime"`
	Ping        time.Duration `json:"ping"`
	PongWait    time.Duration `json:"pong_wait"`
	WriteWait   time.Duration `json:"write_wait"`
	Stop        time.Duration `json:"stop"`  // SIGHUP, then SIGKILL after this
	Drain       time.Duration `json:"drain"` // output after the exit
	// Collect is how long an ended shell waits for a server to collect its
	// end (and recording) before the holder exits anyway.
	Collect time.Duration `json:"collect"`

	Record         bool   `json:"record"`
	RecordMaxBytes int64  `json:"record_max_bytes"`
	Term           string `json:"term"`

	Socket string `json:"socket,omitempty"` // DefaultSocket when empty
}

// DefaultCollect is Config.Collect when zero.
const DefaultCollect = 10 * time.Minute

// Env returns the container environment entries that hand cfg and key to
// the holder.
func Env(cfg Config, key []byte) ([]string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return []string{EnvConfig + "=" + string(b), EnvKey + "=" + hex.EncodeToString(key)}, nil
}

// Load reads the configuration and the key from the environment and
// removes both from it, so the shell never inherits them.
func Load() (Config, []byte, error) {
	var cfg Config
	defer unsetenv(EnvConfig, EnvKey)
	if err := json.Unmarshal([]byte(os.Getenv(EnvConfig)), &cfg); err != nil {
		return cfg, nil, fmt.Errorf("%s: %w", EnvConfig, err)
	}
	key, err := hex.DecodeString(os.Getenv(EnvKey))
	if err != nil || len(key) != sha256.Size {
		return cfg, nil, fmt.Errorf("%s must be %d bytes of hex", EnvKey, sha256.Size)
	}
	return cfg, key, cfg.check()
}

// unsetenv removes the holder's variables; a name without one is no
// error, and the names are valid.
func unsetenv(names ...string) {
	for _, n := range names {
		_ = os.Unsetenv(n)
	}
}

func (c *Config) check() error {
	if len(c.Argv) == 0 {
		return errors.New("no shell to run (argv is empty)")
	}
	if c.Cols < 1 || c.Rows < 1 {
		return errors.New("cols and rows must be positive")
	}
	if c.Socket == "" {
		c.Socket = DefaultSocket
	}
	if c.Collect <= 0 {
		c.Collect = DefaultCollect
	}
	return nil
}

// shellEnv is the holder's environment without its own variables.
func shellEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_HOLDER_") {
			env = append(env, kv)
		}
	}
	return env
}
