package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/server"
)

func newServerCommand(g *globals) *cobra.Command {
	var migrate, withMaintainer bool
	var sshListen string
	cmd := &cobra.Command{
		Use:     "server",
		Aliases: []string{"svr"},
		Short:   "Run the cairn API server",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, cfg, err := g.setup(true)
			if err != nil {
				return err
			}
			if sshListen != "" {
				// The flag is ssh.listen; the rest of ssh.* must hold with it.
				cfg.SSH.Listen = sshListen
				if err := cfg.Validate(); err != nil {
					return err
				}
			}
			srv, err := server.Open(cmd.Context(), cfg, g.secrets(), server.Options{
				Migrate: migrate, Maintainer: withMaintainer, Version: version, Logger: log,
			})
			if err != nil {
				return err
			}
			defer srv.Close()
			log.Info("cairn server listening", "addr", srv.APIAddr())
			if addr := srv.SSHAddr(); addr != "" {
				log.Info("cairn workbench over SSH listening", "addr", addr)
			}
			return srv.Serve(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&migrate, "migrate", false, "apply the embedded schema before serving")
	cmd.Flags().BoolVar(&withMaintainer, "with-maintainer", false, "also run the reconciler loop")
	cmd.Flags().StringVar(&sshListen, "ssh-listen", "", "serve the cairn-tui workbench over SSH on this host:port (ssh.listen)")
	return cmd
}

func newMaintainerCommand(g *globals) *cobra.Command {
	var taskingPassword string
	cmd := &cobra.Command{
		Use:     "maintainer",
		Aliases: []string{"mtn"},
		Short:   "Run the reconciler (any number of replicas; one sweeps at a time)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, cfg, err := g.setup(true)
			if err != nil {
				return err
			}
			if taskingPassword != "" {
				log.Warn("--tasking-sql-pw is accepted and ignored: the maintainer needs no tasking database")
			}
			m, err := server.Open(cmd.Context(), cfg, g.secrets(), server.Options{
				MaintainerOnly: true, Version: version, Logger: log,
			})
			if err != nil {
				return err
			}
			defer m.Close()
			log.Info("cairn maintainer running", "metrics", m.MetricsAddr())
			return m.Serve(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&taskingPassword, "tasking-sql-pw", os.Getenv("CAIRN_TASKING_SQL_PASSWORD"),
		"accepted and ignored (the first cairn's tasking database is gone)")
	return cmd
}

func newMigrateCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the embedded database schema (idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, cfg, err := g.setup(false)
			if err != nil {
				return err
			}
			v, err := server.Migrate(cmd.Context(), cfg, g.sqlPassword)
			if err != nil {
				return err
			}
			cmd.Printf("schema at version %d\n", v)
			return nil
		},
	}
}
