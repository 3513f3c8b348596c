package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/server"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// globals are the flags every sub-command shares; each falls back to its
// environment variable, as the first cairn's deployment scripts expect.
type globals struct {
	logLevel    string
	jsonLog     bool
	sqlPassword string
	s3Access    string
	s3Secret    string
	configFile  string
}

func newRootCommand() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "cairn",
		Short:         "Workspaces and artifacts for containerised agent tools",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := root.PersistentFlags()
	f.StringVarP(&g.logLevel, "log-level", "l", envOr("LOG_LEVEL", "warn"), "log level: debug, info, warn, error (env LOG_LEVEL)")
	f.BoolVarP(&g.jsonLog, "json-log", "j", envBool("LOG_AS_JSON"), "log JSON lines on stderr (env LOG_AS_JSON)")
	f.StringVar(&g.sqlPassword, "sql-pw", os.Getenv("CAIRN_APP_SQL_PASSWORD"), "database password (env CAIRN_APP_SQL_PASSWORD)")
	f.StringVar(&g.s3Access, "s3-access-key", os.Getenv("CAIRN_S3_ACCESS_KEY"), "object store access key (env CAIRN_S3_ACCESS_KEY)")
	f.StringVar(&g.s3Secret, "s3-secret-key", os.Getenv("CAIRN_S3_SECRET_KEY"), "object store secret key (env CAIRN_S3_SECRET_KEY)")
	f.StringVarP(&g.configFile, "config-file", "c", os.Getenv("CAIRN_CONFIG_FILE"), "YAML config file (env CAIRN_CONFIG_FILE)")

	root.AddCommand(
		newServerCommand(g),
		newMaintainerCommand(g),
		newMigrateCommand(g),
		newDoctorCommand(g),
		newDevCommand(g),
		newTokenCommand(),
		&cobra.Command{
			Use:   "version",
			Short: "Print the version",
			Args:  cobra.NoArgs,
			Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), "cairn", version) },
		},
	)
	root.AddCommand(newClientCommands()...)
	return root
}

// logger builds the process logger from the global flags.
func (g *globals) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: expected debug, info, warn or error", g.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	if g.jsonLog {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
}

// loadConfig reads and validates the config file named by -c, logging its
// warnings once.
func (g *globals) loadConfig(log *slog.Logger) (server.Config, error) {
	if g.configFile == "" {
		return server.Config{}, fmt.Errorf("a config file is required: pass -c FILE or set CAIRN_CONFIG_FILE")
	}
	cfg, warnings, err := server.LoadConfig(g.configFile)
	for _, w := range warnings {
		log.Warn(w)
	}
	return cfg, err
}

// setup builds the logger, loads the config and checks the secrets a
// process command needs (the store's keys only when needS3).
func (g *globals) setup(needS3 bool) (*slog.Logger, server.Config, error) {
	log, err := g.logger()
	if err != nil {
		return nil, server.Config{}, err
	}
	cfg, err := g.loadConfig(log)
	if err != nil {
		return nil, server.Config{}, err
	}
	return log, cfg, g.require(needS3)
}

// require names every missing secret at once.
func (g *globals) require(needS3 bool) error {
	var missing []string
	if g.sqlPassword == "" {
		missing = append(missing, "--sql-pw (CAIRN_APP_SQL_PASSWORD)")
	}
	if needS3 && g.s3Access == "" {
		missing = append(missing, "--s3-access-key (CAIRN_S3_ACCESS_KEY)")
	}
	if needS3 && g.s3Secret == "" {
		missing = append(missing, "--s3-secret-key (CAIRN_S3_SECRET_KEY)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required settings: %v", missing)
	}
	return nil
}

func (g *globals) secrets() server.Secrets {
	return server.Secrets{SQLPassword: g.sqlPassword, S3AccessKey: g.s3Access, S3SecretKey: g.s3Secret}
}

func envOr(key, def string) string { return cmp.Or(os.Getenv(key), def) }

func envBool(key string) bool {
	b, _ := strconv.ParseBool(os.Getenv(key))
	return b
}
