package main

import (
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/server"
)

func newServerCommand(g *globals) *cobra.Command {
	var migrate, withMaintainer bool
	cmd := &cobra.Command{
		Use:     "server",
		Aliases: []string{"svr"},
		Short:   "Run the cairn API server",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			cfg, err := g.loadConfig(log)
			if err != nil {
				return err
			}
			if err := g.require(true); err != nil {
				return err
			}
			if withMaintainer {
				log.Warn("--with-maintainer: the maintainer is not part of this build yet; serving the API only")
			}
			srv, err := server.Open(cmd.Context(), cfg, g.secrets(), server.Options{Migrate: migrate, Version: version, Logger: log})
			if err != nil {
				return err
			}
			defer srv.Close()
			log.Info("cairn server listening", "addr", srv.APIAddr())
			return srv.Serve(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&migrate, "migrate", false, "apply the embedded schema before serving")
	cmd.Flags().BoolVar(&withMaintainer, "with-maintainer", false, "also run the reconciler loop")
	return cmd
}

func newMigrateCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the embedded database schema (idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			cfg, err := g.loadConfig(log)
			if err != nil {
				return err
			}
			if err := g.require(false); err != nil {
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
